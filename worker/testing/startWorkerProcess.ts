import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Hardhat's default account #4 (an operator worker in the local stack). Test key, never funded outside. */
export const TEST_WORKER_PRIVATE_KEY = "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a";
export const TEST_GATEWAY_TOKEN = "test-gateway-token-0123456789";

export type WorkerProcess = {
  url: string;
  logs(): string;
  /** Sends SIGTERM without waiting; `exitCode` resolves when the process is gone. */
  terminate(): void;
  exitCode: Promise<number | null>;
  /** Sends SIGTERM and waits for the process to exit. */
  stop(): Promise<void>;
};

export type WorkerExit = { code: number | null; stderr: string; stdout: string };

/**
 * How long a worker may take to start, or to fail to start. Generous: `npm test` runs two lanes of suites at once on
 * two cores, and a cold tsx start costs seconds of CPU then (the CI of stop 47 timed a failing llama start-up out at
 * 30 s; it takes 6.6 s on a quiet host).
 */
export const WORKER_START_DEADLINE_MS = 60_000;
/** For a test that waits on a worker's start-up: above the deadline, so the deadline's error names the output. */
export const WORKER_START_TEST_TIMEOUT_MS = WORKER_START_DEADLINE_MS + 30_000;

function workerEnv(port: number, env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    WORKER_PRIVATE_KEY: TEST_WORKER_PRIVATE_KEY,
    WORKER_PORT: String(port),
    WORKER_GATEWAY_TOKEN: TEST_GATEWAY_TOKEN,
    WORKER_LOG_LEVEL: "warn",
    ...env,
  };
}

/** Starts the real worker (`worker/main.ts` under tsx) as a child process and waits until `/healthz` answers. */
export async function startWorkerProcess(port: number, env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "worker/main.ts"], {
    cwd: repoRoot,
    env: workerEnv(port, env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, "exit");

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + WORKER_START_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}:\n${output}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`worker did not become healthy on port ${port}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    logs: () => output,
    terminate: () => child.kill("SIGTERM"),
    exitCode: exited.then(
      () => child.exitCode,
      () => child.exitCode,
    ),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Runs the worker until it exits on its own (for start-up failures); kills it and throws with its output if it is still
 * running after the start-up deadline.
 */
export async function runWorkerUntilExit(env: Record<string, string>): Promise<WorkerExit> {
  const child = spawn(process.execPath, ["--import", "tsx", "worker/main.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, "exit") as Promise<[number | null]>;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => resolve("deadline"), WORKER_START_DEADLINE_MS);
  });
  const outcome = await Promise.race([exited, deadline]).finally(() => clearTimeout(timer));
  if (outcome === "deadline") {
    child.kill("SIGKILL");
    throw new Error(`worker still running after ${WORKER_START_DEADLINE_MS} ms:\n${stdout}${stderr}`);
  }
  return { code: outcome[0], stdout, stderr };
}
