import type { TestProject } from "vitest/node";
import { startLocalStack, type LocalStack } from "../../scripts/stack/startLocalStack.js";
import {
  MULTIGW_CHAIN_BLOCK_TIME,
  MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS,
  MULTIGW_GATEWAYS,
  MULTIGW_GATEWAY_ENV,
  MULTIGW_STATE_DIR,
  MULTIGW_WORKER_DEFAULTS,
  multigwPorts,
} from "./multigwStack.js";

let stack: LocalStack | undefined;

/**
 * One whole stack with two gateway processes behind the stack's proxy (`GATEWAYS=2` of `npm start`) on a chain
 * mining a block every second (`CHAIN_BLOCK_TIME=1`).
 */
export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    stateDir: MULTIGW_STATE_DIR,
    ports: multigwPorts,
    gateways: MULTIGW_GATEWAYS,
    ...(MULTIGW_CHAIN_BLOCK_TIME > 0 ? { chainBlockTime: MULTIGW_CHAIN_BLOCK_TIME } : {}),
    jobTimeoutSeconds: MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS,
    gatewayEnv: MULTIGW_GATEWAY_ENV,
    workerDefaults: MULTIGW_WORKER_DEFAULTS,
    compile: process.env.TEST_STACK_COMPILE !== "0",
    buildWeb: false,
    echo: process.env.TEST_STACK_ECHO === "1",
    onProgress: (message) => console.log(`[multigw stack] ${message}`),
  });
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
