import path from "node:path";
import type { Hex } from "viem";
import { registerWorker } from "../registerWorker.js";
import { assertPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
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

export type StartWorkerOptions = {
  spec: WorkerSpec;
  gatewayToken: string;
  rpcUrl: string;
  deploymentsFile: string;
  logFile?: string;
  echo?: boolean;
  /** Stake and register on chain once the process answers (default true). */
  register?: boolean;
  readyTimeoutMs?: number;
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

/** Starts one worker daemon (`tsx worker/main.ts`, simulated backend) and registers it on chain with stake. */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { spec } = options;
  await assertPortFree(spec.port, `worker ${spec.models.join(",")}`);
  const endpoint = `http://127.0.0.1:${spec.port}`;
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
  let address: Hex | undefined;
  try {
    await waitFor(
      `worker on port ${spec.port}`,
      async () => {
        const response = await fetch(`${endpoint}/healthz`, {
          headers: { authorization: `Bearer ${options.gatewayToken}` },
        });
        if (response.status !== 200) return false;
        const body = (await response.json()) as { address?: Hex };
        address = body.address;
        return true;
      },
      { timeoutMs: options.readyTimeoutMs ?? 60_000, isAlive: handle.isAlive },
    );
    if (options.register ?? true) {
      const registered = await registerWorker({
        rpcUrl: options.rpcUrl,
        deploymentsFile: options.deploymentsFile,
        workerPrivateKey: spec.privateKey,
        endpoint,
        models: spec.models,
      });
      address = registered.worker;
    }
  } catch (error) {
    await handle.stop();
    throw error;
  }
  if (!address) throw new Error(`worker on port ${spec.port} did not report its address`);
  return { address, endpoint, models: spec.models, fault, pid: handle.pid, stop: () => handle.stop() };
}

export type StartWorkersOptions = Omit<StartWorkerOptions, "spec" | "logFile"> & {
  specs: WorkerSpec[];
  /** Folder for `worker-<port>.log` files. */
  logDir?: string;
};

/**
 * Starts several workers in parallel, then registers them on chain one after the other (the stake minter's
 * nonces must not race); if one fails, the others are stopped before the error propagates.
 */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorker[]> {
  const { specs, logDir, register = true, ...common } = options;
  const results = await Promise.allSettled(
    specs.map((spec) =>
      startWorker({
        ...common,
        spec,
        register: false,
        ...(logDir ? { logFile: path.join(logDir, `worker-${spec.port}.log`) } : {}),
      }),
    ),
  );
  const started = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = results.find((result) => result.status === "rejected");
  try {
    if (failure) throw failure.reason;
    if (register) {
      for (const [index, worker] of started.entries()) {
        await registerWorker({
          rpcUrl: common.rpcUrl,
          deploymentsFile: common.deploymentsFile,
          workerPrivateKey: specs[index]!.privateKey,
          endpoint: worker.endpoint,
          models: worker.models,
        });
      }
    }
  } catch (error) {
    await Promise.all(started.map((worker) => worker.stop()));
    throw error;
  }
  return started;
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
