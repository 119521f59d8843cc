// The solc standard-JSON input of each deployed contract, for explorer ("Standard JSON Input") and Sourcify
// verification: the exact input Hardhat compiled (artifacts/build-info), trimmed to the sources the contract
// imports, so the recompiled bytecode and its metadata hash match what is on chain.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Deployment } from "@credit-metered/client";
import { DEPLOYABLES } from "./deployables.js";
import { artifactPath } from "./readArtifact.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

const artifactSchema = z.object({ contractName: z.string(), inputSourceName: z.string(), buildInfoId: z.string() });
const buildInfoSchema = z.object({
  solcLongVersion: z.string(),
  input: z.object({
    language: z.string(),
    settings: z.record(z.string(), z.unknown()),
    sources: z.record(z.string(), z.object({ content: z.string() })),
  }),
});
type AstNode = { nodeType?: string; absolutePath?: string; nodes?: AstNode[] };
const buildOutputSchema = z.object({
  output: z.object({ sources: z.record(z.string(), z.object({ ast: z.custom<AstNode>() })) }),
});

/** Everything `sourceName` imports, directly or not, itself included. */
function importClosure(sourceName: string, asts: Record<string, { ast: AstNode }>): string[] {
  const seen = new Set<string>();
  const pending = [sourceName];
  while (pending.length > 0) {
    const next = pending.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    for (const node of asts[next]?.ast.nodes ?? []) {
      if (node.nodeType === "ImportDirective" && node.absolutePath) pending.push(node.absolutePath);
    }
  }
  return [...seen].sort();
}

/** One entry of `index.json`: what a verifier form asks besides the input. */
export interface StandardJsonEntry {
  contract: string;
  address: string;
  /** `<source unit>:<name>`, the contract name field of a verification form. */
  fullyQualifiedName: string;
  compilerVersion: string;
  /** ABI-encoded constructor arguments (hex, no 0x) when the deployment recorded them. */
  constructorArguments?: string;
  file: string;
}

/** A compilation's input (`<id>.json`) and output ASTs (`<id>.output.json`) from `artifacts/build-info`. */
function readBuild(buildInfoId: string) {
  const buildInfoFile = path.join(root, "artifacts", "build-info", `${buildInfoId}.json`);
  const buildInfo = buildInfoSchema.parse(JSON.parse(readFileSync(buildInfoFile, "utf8")));
  const outputFile = path.join(root, "artifacts", "build-info", `${buildInfoId}.output.json`);
  const { output } = buildOutputSchema.parse(JSON.parse(readFileSync(outputFile, "utf8")));
  return { buildInfoFile, buildInfo, output };
}

/**
 * Writes `<dir>/<Contract>.json` (the standard-JSON input) for every deployable and `<dir>/index.json` (address,
 * fully qualified name, compiler version, constructor arguments). Returns the files written.
 */
export function writeStandardJsonInputs(
  deployment: Deployment,
  dir: string,
  constructorArguments: Partial<Record<string, string>> = {},
): string[] {
  mkdirSync(dir, { recursive: true });
  const entries: StandardJsonEntry[] = [];
  const files: string[] = [];
  // Every contract usually comes from the same compilation, whose output (all the ASTs) is tens of MB: parsing it
  // once per contract was most of a local deployment's time.
  const builds = new Map<string, ReturnType<typeof readBuild>>();
  for (const deployable of DEPLOYABLES) {
    const artifact = artifactSchema.parse(JSON.parse(readFileSync(artifactPath(deployable.name), "utf8")));
    let build = builds.get(artifact.buildInfoId);
    if (!build) {
      build = readBuild(artifact.buildInfoId);
      builds.set(artifact.buildInfoId, build);
    }
    const { buildInfoFile, buildInfo, output } = build;
    const sources = Object.fromEntries(
      importClosure(artifact.inputSourceName, output.sources).map((name) => {
        const source = buildInfo.input.sources[name];
        if (!source) throw new Error(`${deployable.name}: ${name} is missing from ${buildInfoFile}`);
        return [name, { content: source.content }];
      }),
    );
    const input = { language: buildInfo.input.language, sources, settings: buildInfo.input.settings };
    const file = path.join(dir, `${deployable.name}.json`);
    writeFileSync(file, `${JSON.stringify(input)}\n`);
    files.push(file);
    const key = deployable.abiExport.replace(/Abi$/, "") as keyof Deployment["contracts"];
    const args = constructorArguments[deployable.name];
    entries.push({
      contract: deployable.name,
      address: deployment.contracts[key],
      fullyQualifiedName: `${artifact.inputSourceName}:${artifact.contractName}`,
      compilerVersion: `v${buildInfo.solcLongVersion}`,
      ...(args ? { constructorArguments: args } : {}),
      file: path.basename(file),
    });
  }
  const index = path.join(dir, "index.json");
  writeFileSync(index, `${JSON.stringify({ chainId: deployment.chainId, contracts: entries }, null, 2)}\n`);
  return [...files, index];
}
