import type { TestProject } from "vitest/node";
import { startLocalStack, type LocalStack } from "../../scripts/stack/startLocalStack.js";
import { TEST_JOB_TIMEOUT_MS, TEST_STATE_DIR, testPorts } from "./testStackOptions.js";

let stack: LocalStack | undefined;

/** Starts one whole stack (chain, contracts, Postgres, indexer, gateway, worker pool, demo key) for the run. */
export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    stateDir: TEST_STATE_DIR,
    ports: testPorts,
    gatewayEnv: { JOB_TIMEOUT_MS: String(TEST_JOB_TIMEOUT_MS), LOG_LEVEL: "debug" },
    // A no-op when the artifacts are current; TEST_STACK_COMPILE=0 skips it when the caller compiled already.
    compile: process.env.TEST_STACK_COMPILE !== "0",
    // The API suite does not use the web app.
    buildWeb: false,
    echo: process.env.TEST_STACK_ECHO === "1",
    onProgress: (message) => console.log(`[stack] ${message}`),
  });
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
