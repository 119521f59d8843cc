// `npm run verify -- <job id | tx hash> [--text FILE]` and `npm run verify -- --wallet ADDRESS`.
// Reads only the chain: an RPC URL and the deployments file (flags, else RPC_URL / DEPLOYMENTS_FILE, else the
// local stack's `.local/stack.json`). Exit codes: 0 consistent, 1 an inconsistency, 2 bad input or no chain.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { getAddress, isAddress } from "viem";
import { z } from "zod";
import { repoRoot } from "../stack/repoRoot.js";
import { createChainReader } from "./chainReader.js";
import { checkJob } from "./checkJob.js";
import { VerifyInputError, findJobEvents, resolveJobKey } from "./findJobEvents.js";
import type { ScanProgress } from "./logsByTopics.js";
import { reconcileWallet } from "./reconcileWallet.js";

const USAGE = `usage: npm run verify -- <job_… | 0x job key | 0x tx hash> [--text FILE]
       npm run verify -- --wallet ADDRESS [--blocks-per-query N]
options: --rpc-url URL  --deployments FILE  (default: RPC_URL / DEPLOYMENTS_FILE, else .local/stack.json)
         --blocks-per-query N  blocks per eth_getLogs page (default VERIFY_BLOCKS_PER_QUERY, else 5000)`;

/** Progress goes to stderr at most this often (plus the first and the last page), so stdout stays the report. */
const PROGRESS_EVERY_MS = 500;

/** Prints one progress line per page of the wallet scan (throttled): blocks read, share done, events so far. */
function scanProgress(): (progress: ScanProgress) => void {
  const started = Date.now();
  let printedAt = 0;
  let first = true;
  return ({ fromBlock, toBlock, scannedTo, logs }) => {
    const done = scannedTo >= toBlock;
    if (!first && !done && Date.now() - printedAt < PROGRESS_EVERY_MS) return;
    first = false;
    printedAt = Date.now();
    const total = toBlock - fromBlock + 1n;
    const read = scannedTo - fromBlock + 1n;
    const percent = total === 0n ? 100 : Number((read * 100n) / total);
    console.error(
      `verify: blocks ${fromBlock.toLocaleString("en-US")}–${scannedTo.toLocaleString("en-US")} of ` +
        `${toBlock.toLocaleString("en-US")} (${percent}%), ${logs.toLocaleString("en-US")} escrow events, ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  };
}

const blocksPerQuerySchema = z.coerce.number().int().min(1).max(1_000_000);

const stackFileSchema = z.object({ rpcUrl: z.string().url(), deploymentsFile: z.string().min(1) });

function chainSettings(flags: { "rpc-url"?: string; deployments?: string }): {
  rpcUrl: string;
  deploymentsFile: string;
} {
  let rpcUrl = flags["rpc-url"] ?? process.env.RPC_URL;
  let deploymentsFile = flags.deployments ?? process.env.DEPLOYMENTS_FILE;
  if (!rpcUrl || !deploymentsFile) {
    const stackFile = path.join(repoRoot, process.env.STACK_STATE_DIR ?? ".local", "stack.json");
    if (existsSync(stackFile)) {
      const stack = stackFileSchema.parse(JSON.parse(readFileSync(stackFile, "utf8")));
      rpcUrl ??= stack.rpcUrl;
      deploymentsFile ??= stack.deploymentsFile;
    }
  }
  if (!rpcUrl || !deploymentsFile) {
    throw new VerifyInputError("no chain given: pass --rpc-url and --deployments (or start the local stack)");
  }
  return { rpcUrl, deploymentsFile };
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      text: { type: "string" },
      wallet: { type: "string" },
      "rpc-url": { type: "string" },
      deployments: { type: "string" },
      "blocks-per-query": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || (positionals.length !== 1 && !values.wallet) || (positionals.length > 0 && values.wallet)) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const reader = createChainReader(...(Object.values(chainSettings(values)) as [string, string]));
  if (values.wallet) {
    if (!isAddress(values.wallet, { strict: false })) throw new VerifyInputError(`not an address: ${values.wallet}`);
    const blocks = values["blocks-per-query"] ?? process.env.VERIFY_BLOCKS_PER_QUERY;
    const parsedBlocks = blocks === undefined ? undefined : blocksPerQuerySchema.safeParse(blocks);
    if (parsedBlocks && !parsedBlocks.success) throw new VerifyInputError(`not a block count: ${blocks}`);
    const report = await reconcileWallet(reader, getAddress(values.wallet), {
      ...(parsedBlocks?.success ? { blocksPerQuery: BigInt(parsedBlocks.data) } : {}),
      onProgress: scanProgress(),
    });
    console.log(report.lines.join("\n"));
    console.log(report.problems.length === 0 ? "CONSISTENT" : `INCONSISTENT: ${report.problems.length} problem(s)`);
    return report.problems.length === 0 ? 0 : 1;
  }
  const text = values.text === undefined ? undefined : readFileSync(values.text, "utf8");
  const jobKey = await resolveJobKey(reader, positionals[0]!);
  const report = await checkJob(reader, await findJobEvents(reader, jobKey), text);
  console.log(report.lines.join("\n"));
  console.log(
    report.problems.length === 0
      ? `CONSISTENT (${report.outcome})`
      : `INCONSISTENT (${report.outcome}): ${report.problems.join("; ")}`,
  );
  return report.problems.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`verify: ${message.split("\n")[0]}`);
    process.exit(2);
  },
);
