import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The import boundaries of eslint.config.js fire: each case lints one import line as if it stood in the named file
 * (ESLint's Node API with the repository's own config) and expects `no-restricted-imports`, or nothing.
 */
const eslint = new ESLint({ cwd: fileURLToPath(new URL("../../..", import.meta.url)) });

async function restrictedImports(filePath: string, line: string): Promise<number> {
  const [result] = await eslint.lintText(`${line}\nexport const probe = value;\n`, { filePath });
  return result!.messages.filter((message) => message.ruleId === "no-restricted-imports").length;
}

describe("the import boundaries", () => {
  it("keep the web app out of scripts/", async () => {
    expect(
      await restrictedImports("web/src/chain/probe.ts", 'import { value } from "../../../scripts/verify/x";'),
    ).toBe(1);
  });

  it("keep the web app out of api/, types included", async () => {
    expect(await restrictedImports("web/src/probe.ts", 'import type { value } from "../../api/contract/index";')).toBe(
      1,
    );
  });

  it("let the web app import the client by its name", async () => {
    expect(await restrictedImports("web/src/probe.ts", 'import { value } from "@credit-metered/client";')).toBe(0);
  });

  it("keep the bench out of the gateway's internals", async () => {
    expect(await restrictedImports("bench/probe.ts", 'import { value } from "../api/index/indexReader.js";')).toBe(1);
  });

  it("refuse a relative path into the client package", async () => {
    expect(
      await restrictedImports("api/jobs/probe.ts", 'import { value } from "../../packages/client/src/jobId.js";'),
    ).toBe(1);
  });

  it("keep Node APIs out of the client's browser-safe entry", async () => {
    expect(await restrictedImports("packages/client/src/probe.ts", 'import { value } from "node:fs";')).toBe(1);
  });

  it("keep the ./local and ./node entries out of the browser-safe entry", async () => {
    expect(await restrictedImports("packages/client/src/probe.ts", 'import { value } from "./local.js";')).toBe(1);
    expect(await restrictedImports("packages/client/src/http/probe.ts", 'import { value } from "../node.js";')).toBe(1);
  });

  it("let the ./node entry use Node APIs", async () => {
    expect(await restrictedImports("packages/client/src/node.ts", 'import { value } from "node:fs";')).toBe(0);
  });
});
