import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { buildDocsSite } from "./site.js";

/**
 * `npm run docs:build [-- --base-url https://api.example.com --out DIR]`: the docs site as static files (default
 * `docs-site/dist/`), for any static host. `--base-url` is the API root the examples show (default the local
 * stack's).
 */
const { values } = parseArgs({ options: { "base-url": { type: "string" }, out: { type: "string" } }, strict: true });
const out = path.resolve(values.out ?? fileURLToPath(new URL("./dist", import.meta.url)));
const site = await buildDocsSite({ apiBaseUrl: values["base-url"] ?? "http://127.0.0.1:8080" });
rmSync(out, { recursive: true, force: true });
for (const [name, file] of site) {
  const target = path.join(out, name);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, file.body);
}
console.log(`wrote ${site.size} files to ${out}`);
