import path from "node:path";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { spawnChild, type ChildHandle } from "../../../scripts/stack/spawnChild.js";
import { waitFor } from "../../../scripts/stack/waitFor.js";

export interface DispatcherProcess {
  name: string;
  /** SIGKILL to the whole process group: no cleanup, no graceful stop (a crash). */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** A real dispatcher process (`tsx api/webhooks/runDispatcher.ts`), configured through its environment. */
export async function startDispatcherProcess(options: {
  name: string;
  databaseUrl: string;
  schema: string;
  indexerUrl: string;
  caFile: string;
  logFile: string;
  env?: Record<string, string>;
}): Promise<DispatcherProcess> {
  let ready = false;
  const handle: ChildHandle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/tsx"),
    args: ["api/webhooks/runDispatcher.ts"],
    cwd: repoRoot,
    logFile: options.logFile,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      API_DB_SCHEMA: options.schema,
      INDEXER_URL: options.indexerUrl,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      WEBHOOK_RETRY_SCHEDULE_MS: "0,200,200,200,200",
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_LEASE_MS: "3000",
      WEBHOOK_CA_FILE: options.caFile,
      WEBHOOK_DISPATCHER_NAME: options.name,
      ...options.env,
    },
  });
  handle.child.stdout?.on("data", (chunk: Buffer) => {
    if (chunk.toString().includes("dispatcher ready")) ready = true;
  });
  await waitFor(`dispatcher ${options.name} ready (log: ${options.logFile})`, () => ready, {
    timeoutMs: 60_000,
    isAlive: () => handle.isAlive(),
  });
  const pid = handle.child.pid as number;
  return {
    name: options.name,
    async kill() {
      process.kill(-pid, "SIGKILL");
      await waitFor(`dispatcher ${options.name} dead`, () => !handle.isAlive());
      await handle.stop();
    },
    stop: () => handle.stop(),
  };
}
