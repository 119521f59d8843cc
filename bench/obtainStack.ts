import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../scripts/stack/repoRoot.js";
import { startLocalStack, stackPorts, type StackInfo } from "../scripts/stack/startLocalStack.js";

/** The simulated workers' fixed timing in a stack the bench starts (direct and gateway runs see the same). */
export const BENCH_WORKER = { ttftMs: 20, tokensPerSecond: 500, outputTokens: 16 };
/** Node options of the bench's gateway (`BENCH_GATEWAY_NODE_OPTIONS`; empty string for Node's defaults). */
export const GATEWAY_NODE_OPTIONS =
  process.env.BENCH_GATEWAY_NODE_OPTIONS ?? "--max-old-space-size=192 --max-semi-space-size=4";
export const BENCH_PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 8860);

/** The state folder of a stack the bench starts (its embedded Postgres cluster lives in `postgres/data` there). */
export const BENCH_STATE_DIR = path.join(repoRoot, ".local", "bench");

export type BenchStack = { info: StackInfo; stop: () => Promise<void>; started: boolean };

/**
 * `BENCH_USE_STACK=1`: the running stack of `.local/stack.json` (`npm start`; its settings, e.g. its burst
 * limit, apply). Otherwise a stack of its own in `.local/bench` on ports 8860–8869 with fixed worker timing, a
 * burst limit out of the way and a generously funded demo wallet; `chainBlockTime` makes its chain mine a block
 * every so many seconds once it is set up, `gateways` runs several gateway processes behind the stack's proxy,
 * `gatewayRpcUrl` points the gateways at another chain endpoint (a counting pass-through, `bench/rpcCounter.ts`).
 */
export async function obtainStack(
  progress: (message: string) => void,
  options: { chainBlockTime?: number; compile?: boolean; gateways?: number; gatewayRpcUrl?: string } = {},
): Promise<BenchStack> {
  if (process.env.BENCH_USE_STACK === "1") {
    const file = path.join(repoRoot, ".local", "stack.json");
    const info = JSON.parse(readFileSync(file, "utf8")) as StackInfo;
    progress(`using the running stack of ${file} (${info.apiUrl})`);
    return { info, stop: async () => {}, started: false };
  }
  // Workers inherit the environment: no per-worker concurrency cap in the way, quiet logs.
  process.env.WORKER_MAX_INFLIGHT ??= "2000";
  process.env.WORKER_LOG_LEVEL ??= "warn";
  const stack = await startLocalStack({
    stateDir: BENCH_STATE_DIR,
    ports: stackPorts(BENCH_PORT_BASE),
    workerDefaults: {
      ttftMs: BENCH_WORKER.ttftMs,
      tokensPerSecond: BENCH_WORKER.tokensPerSecond,
      minOutputTokens: BENCH_WORKER.outputTokens,
      maxOutputTokens: BENCH_WORKER.outputTokens,
    },
    gatewayEnv: {
      RATE_LIMIT_MAX: "100000000",
      LOG_LEVEL: "warn",
      ...(process.env.BENCH_LOCK_MODE ? { LOCK_MODE: process.env.BENCH_LOCK_MODE } : {}),
      ...(options.gatewayRpcUrl ? { RPC_URL: options.gatewayRpcUrl } : {}),
      // A capped V8 heap keeps the gateway's RSS bounded under 200 streams (uncapped, V8 lets the heap grow to
      // ~340 MB of mostly garbage and RSS passes 600 MB). Override e.g. with `--cpu-prof --cpu-prof-dir=/tmp/prof`.
      NODE_OPTIONS: GATEWAY_NODE_OPTIONS,
    },
    demoUsdg: 20_000n,
    gateways: options.gateways ?? 1,
    ...(options.chainBlockTime ? { chainBlockTime: options.chainBlockTime } : {}),
    compile: (options.compile ?? true) && process.env.BENCH_COMPILE !== "0",
    // The web app plays no part in the measures; building it costs a minute per stack on a busy machine.
    buildWeb: false,
    onProgress: (message) => progress(`stack: ${message}`),
  });
  const { stop, ...info } = stack;
  return { info, stop, started: true };
}
