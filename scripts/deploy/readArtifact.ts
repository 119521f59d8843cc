import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";
import { z } from "zod";
import { DEPLOYABLES, type DeployableName } from "./deployables.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

const artifactSchema = z.object({
  contractName: z.string(),
  abi: z.array(z.unknown()),
  bytecode: z.string().regex(/^0x[0-9a-fA-F]*$/),
});

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

/** Path of a deployable's Hardhat artifact, `artifacts/contracts/<source>/<name>.json`. */
export function artifactPath(name: DeployableName): string {
  const entry = DEPLOYABLES.find((d) => d.name === name);
  if (!entry) throw new Error(`not a deployable: ${name}`);
  return path.join(root, "artifacts", "contracts", entry.source, `${name}.json`);
}

/** ABI and creation bytecode of a deployable, from the compiled artifacts. */
export function readArtifact(name: DeployableName): Artifact {
  const file = artifactPath(name);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new Error(`no artifact at ${file}: run \`npx hardhat compile\` first`);
  }
  const artifact = artifactSchema.parse(JSON.parse(text));
  return { abi: artifact.abi as Abi, bytecode: artifact.bytecode as Hex };
}
