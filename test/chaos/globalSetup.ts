import { rmSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startLocalStack, type LocalStack } from "../../scripts/stack/startLocalStack.js";
import {
  CHAOS_CHAIN_JOB_TIMEOUT_SECONDS,
  CHAOS_GATEWAY_ENV,
  CHAOS_STATE_DIR,
  CHAOS_WORKER_DEFAULTS,
  chaosPorts,
} from "./chaosStack.js";

let stack: LocalStack | undefined;

/** One whole stack for the chaos run; the tests signal, kill and restart its processes. */
export async function setup(project: TestProject): Promise<void> {
  // Process ids an earlier run recorded for its restarts (test/chaos/support/faults.ts) mean nothing now.
  rmSync(path.join(CHAOS_STATE_DIR, "chaos-pids.json"), { force: true });
  stack = await startLocalStack({
    stateDir: CHAOS_STATE_DIR,
    ports: chaosPorts,
    jobTimeoutSeconds: CHAOS_CHAIN_JOB_TIMEOUT_SECONDS,
    gatewayEnv: CHAOS_GATEWAY_ENV,
    workerDefaults: CHAOS_WORKER_DEFAULTS,
    compile: process.env.TEST_STACK_COMPILE !== "0",
    buildWeb: false,
    echo: process.env.TEST_STACK_ECHO === "1",
    onProgress: (message) => console.log(`[chaos stack] ${message}`),
  });
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
