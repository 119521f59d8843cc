import path from "node:path";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { registerWorker, registerWorkers } from "../registerWorker.js";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { settleAll } from "./settleAll.js";
import { spawnChild } from "./spawnChild.js";
import { waitFor } from "./waitFor.js";

/** Fault a simulated worker exhibits on purpose (worker/config.ts `SIM_FAULT`). */
export type WorkerFault = "none" | "never_answer" | "fail_before_first_token" | "fail_after_first_token" | "wrong_hash";

export type WorkerSpec = {
  privateKey: Hex;
  port: number;
  models: string[];
  fault?: WorkerFault;
  /** Simulated backend timing and length (worker/config.ts `SIM_*`). */
  ttftMs?: number;
  tokensPerSecond?: number;
  minOutputTokens?: number;
  maxOutputTokens?: number;
};

export type LaunchWorkerOptions = {
  spec: WorkerSpec;
  gatewayToken: string;
  logFile?: string;
  echo?: boolean;
  readyTimeoutMs?: number;
};

export type StartWorkerOptions = LaunchWorkerOptions & {
  rpcUrl: string;
  deploymentsFile: string;
  /** Stake and register on chain while the process starts (default true). */
  register?: boolean;
};

export type RunningWorker = {
  address: Hex;
  endpoint: string;
  models: string[];
  fault: WorkerFault;
  /** Process group of the worker (fault-injection tests signal it). */
  pid: number;
  stop: () => Promise<void>;
};

/**
 * A worker process that may still be starting: `ready` resolves once it answers `/healthz` and rejects when it exits
 * or times out first (a handler is attached, so a caller that awaits it later sees the failure, not the runtime).
 */
export type LaunchedWorker = RunningWorker & { ready: Promise<void>; privateKey: Hex };

/** How long a worker process may take to answer `/healthz` by default (module loading, the token counter's warm-up). */
export const WORKER_READY_TIMEOUT_MS = 60_000;

/** The URL a worker on `port` announces on chain (the gateway reaches it there). */
function workerEndpoint(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/**
 * Spawns one worker daemon (`tsx worker/main.ts`, simulated backend) without waiting for it: it takes seconds to
 * answer (module loading, the token counter's warm-up) and needs nothing but its settings, while its registration
 * needs only its key, so callers overlap the two.
 */
export async function launchWorker(options: LaunchWorkerOptions): Promise<LaunchedWorker> {
  const { spec } = options;
  await assertPortFree(spec.port, `worker ${spec.models.join(",")}`);
  const endpoint = workerEndpoint(spec.port);
  const fault = spec.fault ?? "none";
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WORKER_PRIVATE_KEY: spec.privateKey,
    WORKER_HOST: "127.0.0.1",
    WORKER_PORT: String(spec.port),
    WORKER_GATEWAY_TOKEN: options.gatewayToken,
    WORKER_MODELS: spec.models.join(","),
    SIM_FAULT: fault,
    WORKER_LOG_LEVEL: process.env.WORKER_LOG_LEVEL ?? "info",
    NO_COLOR: "1",
  };
  if (spec.ttftMs !== undefined) env.SIM_TTFT_MS = String(spec.ttftMs);
  if (spec.tokensPerSecond !== undefined) env.SIM_TOKENS_PER_SECOND = String(spec.tokensPerSecond);
  if (spec.minOutputTokens !== undefined) env.SIM_MIN_OUTPUT_TOKENS = String(spec.minOutputTokens);
  if (spec.maxOutputTokens !== undefined) env.SIM_MAX_OUTPUT_TOKENS = String(spec.maxOutputTokens);
  // A config file from the operator's environment would override the models we assign.
  delete env.WORKER_CONFIG;

  const handle = spawnChild({
    command: path.join(repoRoot, "node_modules/.bin/tsx"),
    args: ["worker/main.ts"],
    cwd: repoRoot,
    env,
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.echo ? { echo: options.echo } : {}),
  });
  const ready = waitFor(
    `worker on port ${spec.port}`,
    async () => {
      const response = await fetch(`${endpoint}/healthz`, {
        headers: { authorization: `Bearer ${options.gatewayToken}` },
      });
      return response.status === 200;
    },
    { timeoutMs: options.readyTimeoutMs ?? WORKER_READY_TIMEOUT_MS, isAlive: handle.isAlive },
  ).then(() => undefined);
  ready.catch(() => {});
  return {
    address: privateKeyToAccount(spec.privateKey).address,
    endpoint,
    models: spec.models,
    fault,
    pid: handle.pid,
    stop: () => handle.stop(),
    ready,
    privateKey: spec.privateKey,
  };
}

/** Starts one worker and registers it on chain with stake (idempotent), the two at once; resolves once both are done. */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { ready, privateKey: _privateKey, ...worker } = await launchWorker(options);
  const registered =
    (options.register ?? true)
      ? registerWorker({
          rpcUrl: options.rpcUrl,
          deploymentsFile: options.deploymentsFile,
          workerPrivateKey: options.spec.privateKey,
          endpoint: worker.endpoint,
          models: worker.models,
        })
      : undefined;
  try {
    await settleAll([ready, registered]);
  } catch (error) {
    await worker.stop();
    throw error;
  }
  return worker;
}

export type LaunchWorkersOptions = Omit<LaunchWorkerOptions, "spec" | "logFile"> & {
  specs: WorkerSpec[];
  /** Folder for `worker-<port>.log` files. */
  logDir?: string;
};

/** Launches several workers (launchWorker); if one cannot be spawned, the others are stopped. */
export async function launchWorkers(options: LaunchWorkersOptions): Promise<LaunchedWorker[]> {
  const { specs, logDir, ...common } = options;
  const results = await Promise.allSettled(
    specs.map((spec) =>
      launchWorker({ ...common, spec, ...(logDir ? { logFile: path.join(logDir, `worker-${spec.port}.log`) } : {}) }),
    ),
  );
  const launched = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = results.find((result) => result.status === "rejected");
  if (failure) {
    await Promise.all(launched.map((worker) => worker.stop()));
    throw failure.reason;
  }
  return launched;
}

/**
 * Registers launched workers on chain in one batch (registerWorkers: on a local chain the minter's transactions go
 * first, then each worker's own, the workers in parallel) while waiting for their processes to answer.
 */
export async function registerLaunchedWorkers(
  workers: readonly LaunchedWorker[],
  chain: { rpcUrl: string; deploymentsFile: string },
): Promise<void> {
  await settleAll([
    registerWorkers({
      ...chain,
      workers: workers.map(({ privateKey, endpoint, models }) => ({ workerPrivateKey: privateKey, endpoint, models })),
    }),
    ...workers.map((worker) => worker.ready),
  ]);
}

/**
 * Assigns `models` to `workerCount` workers so that every model has `replicas` workers (round-robin over
 * consecutive models): with 8 models, 4 workers and 2 replicas each worker hosts 4 models.
 */
export function assignModels(models: readonly string[], workerCount: number, replicas = 2): string[][] {
  const assignment: string[][] = Array.from({ length: workerCount }, () => []);
  models.forEach((model, index) => {
    for (let replica = 0; replica < Math.min(replicas, workerCount); replica++) {
      assignment[(index + replica) % workerCount]!.push(model);
    }
  });
  return assignment;
}
