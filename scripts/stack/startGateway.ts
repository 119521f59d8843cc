import path from "node:path";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { spawnChild } from "./spawnChild.js";
import { waitFor } from "./waitFor.js";

export type StartGatewayOptions = {
  port: number;
  databaseUrl: string;
  /** Postgres schema of the gateway's own tables (one per gateway deployment sharing a database). */
  dbSchema: string;
  indexerUrl: string;
  rpcUrl: string;
  deploymentsFile: string;
  gatewayPrivateKey: string;
  workerGatewayToken: string;
  /** Further gateway settings (api/config.ts), e.g. `JOB_TIMEOUT_MS`, `RATE_LIMIT_MAX`, `APP_URL`. */
  env?: Record<string, string>;
  logFile?: string;
  echo?: boolean;
  readyTimeoutMs?: number;
};

/** A healthy gateway answers `/healthz` at once; a probe waiting longer is abandoned and retried. */
const HEALTHZ_PROBE_TIMEOUT_MS = 5_000;

export type RunningGateway = {
  apiUrl: string;
  /** Process group of the gateway (fault-injection tests signal it). */
  pid: number;
  stop: () => Promise<void>;
};

/** Starts the gateway (`tsx api/main.ts`) as its own process and waits until it answers `/healthz`. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  await assertPortFree(options.port, "gateway");
  const apiUrl = `http://127.0.0.1:${options.port}`;
  const handle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/tsx"),
    args: ["api/main.ts"],
    cwd: repoRoot,
    env: {
      ...process.env,
      API_HOST: "127.0.0.1",
      API_PORT: String(options.port),
      DATABASE_URL: options.databaseUrl,
      API_DB_SCHEMA: options.dbSchema,
      INDEXER_URL: options.indexerUrl,
      RPC_URL: options.rpcUrl,
      DEPLOYMENTS_FILE: path.resolve(options.deploymentsFile),
      GATEWAY_PRIVATE_KEY: options.gatewayPrivateKey,
      WORKER_GATEWAY_TOKEN: options.workerGatewayToken,
      // Local stacks deliver webhooks to plain-HTTP receivers on this machine.
      WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      NO_COLOR: "1",
      // V8 otherwise lets a busy gateway's heap grow to several hundred MB of garbage before collecting
      // (607 MB RSS at 200 streams, 281 MB with these limits; the README's "heap flags" says why these sizes).
      // The caller's NODE_OPTIONS come last, so a flag given there wins over these.
      NODE_OPTIONS: ["--max-old-space-size=192 --max-semi-space-size=4", process.env.NODE_OPTIONS]
        .filter(Boolean)
        .join(" "),
      ...options.env,
    },
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.echo ? { echo: options.echo } : {}),
  });
  try {
    await waitFor("gateway", async () => probeHealthz(apiUrl), {
      timeoutMs: options.readyTimeoutMs ?? 60_000,
      intervalMs: 100,
      isAlive: handle.isAlive,
    });
  } catch (error) {
    await handle.stop();
    throw error;
  }
  return { apiUrl, pid: handle.pid, stop: () => handle.stop(10_000) };
}

/** One `/healthz` probe, bounded so a connection that never answers cannot outlast the readiness deadline. */
async function probeHealthz(apiUrl: string): Promise<boolean> {
  const response = await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_PROBE_TIMEOUT_MS) });
  if (response.status === 200) return true;
  throw new Error(`/healthz answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
}
