import path from "node:path";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { spawnChild } from "./spawnChild.js";
import { waitFor } from "./waitFor.js";

export type StartIndexerOptions = {
  databaseUrl: string;
  /** Postgres schema of this indexer's tables (≤ 45 chars); one per stack. Restarting with the same
   *  schema and the same indexer code resumes from the last indexed block. */
  databaseSchema: string;
  rpcUrl: string;
  /** The deployments JSON written by `deployContracts`. */
  deploymentsFile: string;
  port: number;
  logFile?: string;
  echo?: boolean;
  /** Ponder log level: error | warn | info | debug | trace. Default `warn`. */
  logLevel?: string;
  readyTimeoutMs?: number;
};

export type RunningIndexer = { indexerUrl: string; stop: () => Promise<void> };

/** Starts `ponder start` for `indexer/` and waits until `/ready` (historical backfill done, live from here). */
export async function startIndexer(options: StartIndexerOptions): Promise<RunningIndexer> {
  await assertPortFree(options.port, "indexer");
  const indexerUrl = `http://127.0.0.1:${options.port}`;
  const handle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/ponder"),
    args: ["start", "--root", "indexer", "--port", String(options.port), "--hostname", "127.0.0.1"],
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      DATABASE_SCHEMA: options.databaseSchema,
      PONDER_RPC_URL: options.rpcUrl,
      DEPLOYMENTS_FILE: path.resolve(options.deploymentsFile),
      PONDER_LOG_LEVEL: options.logLevel ?? "warn",
      NO_COLOR: "1",
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
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { indexerUrl, stop: () => handle.stop(10_000) };
}
