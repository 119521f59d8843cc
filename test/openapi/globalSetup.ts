import path from "node:path";
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startLocalStack, stackPorts, type LocalStack } from "../../scripts/stack/startLocalStack.js";

/**
 * Its own stack (ports 8850–8869, `.local/test-openapi`), so it runs next to the API suite. The gateway logs at
 * debug level: the redaction test reads that log. Provides `stack` like the API suite, so test/support works.
 */
export const OPENAPI_STATE_DIR = path.join(repoRoot, ".local", "test-openapi");
let stack: LocalStack | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    stateDir: OPENAPI_STATE_DIR,
    ports: stackPorts(Number(process.env.OPENAPI_STACK_PORT_BASE ?? 8850)),
    gatewayEnv: { LOG_LEVEL: "debug", JOB_TIMEOUT_MS: "8000" },
    compile: process.env.TEST_STACK_COMPILE !== "0",
    onProgress: (message) => console.log(`[stack] ${message}`),
  });
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  if (process.env.KEEP_TEST_STATE !== "1") rmSync(OPENAPI_STATE_DIR, { recursive: true, force: true });
}
