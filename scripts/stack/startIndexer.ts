import path from "node:path";
import { pathToFileURL } from "node:url";
import { dropSchema } from "./dropSchema.js";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { spawnChild } from "./spawnChild.js";
import { waitFor } from "./waitFor.js";
import { waitForIndexedBlock } from "./waitForIndexedBlock.js";

/** As a file URL: it has no spaces, so NODE_OPTIONS needs no quoting whatever the checkout's path. */
const EVENT_LOOP_SAMPLING_PRELOAD = pathToFileURL(path.join(repoRoot, "shared/metrics/eventLoopSampling.ts")).href;

export type StartIndexerOptions = {
  databaseUrl: string;
  /** Postgres schema of this indexer's tables (≤ 45 chars); one per stack. Restarting with the same
   *  schema and the same indexer code resumes from the last indexed block. */
  databaseSchema: string;
  rpcUrl: string;
  /** Optional WebSocket endpoint: new blocks arrive by subscription instead of polling. Not for a local Hardhat
   *  node: Ponder then waits for the next new block before indexing anything, so an idle chain never catches up. */
  wsUrl?: string;
  /** The deployments JSON written by `deployContracts`. */
  deploymentsFile: string;
  port: number;
  logFile?: string;
  echo?: boolean;
  /** Ponder log level: error | warn | info | debug | trace. Default `warn`. */
  logLevel?: string;
  readyTimeoutMs?: number;
  /** Drop `databaseSchema` first: set it when the chain is new (see dropSchema.ts). A schema last used by
   *  different indexer code or other contract addresses makes Ponder refuse to start, so a local stack
   *  resets it then too. Default false: resume. */
  resetSchema?: boolean;
  /** Further indexer settings (indexer/config/readIndexerEnv.ts), e.g. `INDEX_LAG_READY_MAX_SECONDS`. */
  env?: Record<string, string>;
};

export type RunningIndexer = {
  indexerUrl: string;
  /** Process group of `ponder start` (fault-injection tests signal it). */
  pid: number;
  stop: () => Promise<void>;
};

/**
 * Starts `ponder start` for `indexer/` and waits until it is ready AND has indexed the chain head as of the
 * call (Ponder's `/ready` alone only means "backfill done"; on a local chain every block is live).
 */
export async function startIndexer(options: StartIndexerOptions): Promise<RunningIndexer> {
  await assertPortFree(options.port, "indexer");
  if (options.resetSchema) await dropSchema(options.databaseUrl, options.databaseSchema);
  const indexerUrl = `http://127.0.0.1:${options.port}`;
  const handle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/ponder"),
    args: ["start", "--port", String(options.port), "--hostname", "127.0.0.1"],
    // Run inside indexer/: Ponder writes generated/schema.graphql under its working directory, not its root.
    cwd: path.join(repoRoot, "indexer"),
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      DATABASE_SCHEMA: options.databaseSchema,
      PONDER_RPC_URL: options.rpcUrl,
      ...(options.wsUrl ? { PONDER_WS_URL: options.wsUrl } : {}),
      DEPLOYMENTS_FILE: path.resolve(options.deploymentsFile),
      PONDER_LOG_LEVEL: options.logLevel ?? process.env.PONDER_LOG_LEVEL ?? "warn",
      NO_COLOR: "1",
      // Loaded before Ponder: its event-loop monitor otherwise wakes the indexer every millisecond (the file says why).
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${EVENT_LOOP_SAMPLING_PRELOAD}`].filter(Boolean).join(" "),
      ...options.env,
    },
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.echo ? { echo: options.echo } : {}),
  });
  try {
    await waitFor("indexer", async () => (await fetch(`${indexerUrl}/ready`)).status === 200, {
      timeoutMs: options.readyTimeoutMs ?? 120_000,
      intervalMs: 100,
      isAlive: handle.isAlive,
    });
    await waitForIndexedBlock(indexerUrl, await chainHead(options.rpcUrl), {
      timeoutMs: options.readyTimeoutMs ?? 120_000,
    });
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { indexerUrl, pid: handle.pid, stop: () => handle.stop(10_000) };
}

async function chainHead(rpcUrl: string): Promise<number> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  const body = (await response.json()) as { result?: string };
  if (typeof body.result !== "string") throw new Error(`eth_blockNumber failed at ${rpcUrl}`);
  return Number.parseInt(body.result, 16);
}
