import { readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The TypeScript files under `dir` (tests included: a test importing its module back would be a cycle too). */
function sourcesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourcesUnder(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

/**
 * The files `file` imports by a relative path, type-only imports and `export … from` included (a cycle of types
 * still ties the two modules' meanings together). Read with the compiler's pre-processor: no type checking.
 */
function relativeImportsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets: string[] = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const base = resolve(dirname(file), fileName).replace(/\.js$/, "");
    const target = [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((path) => existsSync(path));
    if (target) targets.push(target);
  }
  return targets;
}

/** Every import cycle of the graph, each once, as the list of files around it (Tarjan's strongly connected
 *  components: any component of more than one file, or a file importing itself, holds a cycle). */
function importCycles(files: string[]): string[][] {
  const graph = new Map(files.map((file) => [file, relativeImportsOf(file)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) components.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return components.map((component) => component.map((file) => relative(ROOT, file)).sort());
}

describe("import graph", () => {
  // One module owns each concern and depends on the narrow interfaces it uses (api/README.md "Where to read"): a
  // cycle means two modules each need the other, which is how a bag of everything (the old GatewayDeps) crept in.
  it.each(["api", "packages", "shared", "worker"])("%s/ has no import cycle", (folder) => {
    expect(importCycles(sourcesUnder(join(ROOT, folder)))).toEqual([]);
  });
});
