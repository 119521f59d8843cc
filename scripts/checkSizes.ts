// Contract-size check (`npm run size:check`, part of `npm run test:contracts` beside the gas check): every
// deployable's deployed bytecode — and the escrow's cold-path module, which the escrow deploys itself — must keep
// at least 2 KiB of headroom under EIP-170's 24,576-byte limit (issue 22, item 7), so a fix always has room.
// The headroom comes from structure (CreditEscrow runs its cold paths in EscrowModule), never from lowering
// optimizer runs. Prints each contract's deployed and creation sizes; `SIZE_JSON=1` prints them as JSON.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { DEPLOYABLES } from "./deploy/deployables.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** EIP-170's limit on deployed code, bytes. */
const CODE_SIZE_LIMIT = 24_576;
/** EIP-3860's limit on creation code, bytes. */
const INITCODE_SIZE_LIMIT = 49_152;
/** Headroom every contract must keep under the limit. */
const MIN_HEADROOM = 2_048;

/** Contracts deployed by another contract's constructor rather than by the deploy scripts. */
const INNER = [{ name: "EscrowModule", source: "escrow/EscrowModule.sol" }] as const;

const artifactSchema = z.object({
  bytecode: z.string().regex(/^0x[0-9a-fA-F]*$/),
  deployedBytecode: z.string().regex(/^0x[0-9a-fA-F]*$/),
});

const bytesOf = (hex: string) => (hex.length - 2) / 2;

const rows = [...DEPLOYABLES, ...INNER].map(({ name, source }) => {
  const file = path.join(root, "artifacts", "contracts", source, `${name}.json`);
  const artifact = artifactSchema.parse(JSON.parse(readFileSync(file, "utf8")));
  const deployed = bytesOf(artifact.deployedBytecode);
  return { name, deployed, headroom: CODE_SIZE_LIMIT - deployed, creation: bytesOf(artifact.bytecode) };
});

if (process.env.SIZE_JSON === "1") console.log(JSON.stringify(rows));
let failed = false;
for (const row of rows) {
  const ok = row.headroom >= MIN_HEADROOM && row.creation <= INITCODE_SIZE_LIMIT;
  if (!ok) failed = true;
  console.log(
    `${ok ? "✓" : "✗"} ${row.name.padEnd(16)} deployed ${String(row.deployed).padStart(6)} B  headroom ${String(
      row.headroom,
    ).padStart(6)} B  creation ${String(row.creation).padStart(6)} B`,
  );
}
if (failed) {
  console.error(
    `size: a contract keeps less than ${MIN_HEADROOM} B under ${CODE_SIZE_LIMIT} B (or its creation code exceeds ${INITCODE_SIZE_LIMIT} B)`,
  );
  process.exit(1);
}
console.log(`size: every contract keeps at least ${MIN_HEADROOM} B of headroom under ${CODE_SIZE_LIMIT} B`);
