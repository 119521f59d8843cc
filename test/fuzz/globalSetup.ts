import path from "node:path";
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startLocalStack, stackPorts, type LocalStack } from "../../scripts/stack/startLocalStack.js";

/**
 * The fuzzer's own stack (ports 9900–9919 unless FUZZ_STACK_PORT_BASE says otherwise, `.local/test-fuzz`): the whole
 * product, web app included (unknown paths must not fall through to it), with production webhook target rules
 * (no private, loopback or reserved targets), a burst limit the fuzzer never reaches, a short job timeout and
 * fast simulated workers. Provides `stack` like the other suites, so test/support works.
 */
export const FUZZ_STATE_DIR = path.join(repoRoot, ".local", "test-fuzz");
let stack: LocalStack | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    stateDir: FUZZ_STATE_DIR,
    ports: stackPorts(Number(process.env.FUZZ_STACK_PORT_BASE ?? 9900)),
    gatewayEnv: {
      JOB_TIMEOUT_MS: "8000",
      RATE_LIMIT_MAX: "100000000",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "false",
      WEBHOOK_ALLOW_HTTP_LOOPBACK: "false",
      LOG_LEVEL: "info",
    },
    workerDefaults: { ttftMs: 5, tokensPerSecond: 2_000, minOutputTokens: 4, maxOutputTokens: 24 },
    compile: process.env.TEST_STACK_COMPILE !== "0",
    buildWeb: process.env.FUZZ_BUILD_WEB !== "0",
    echo: process.env.TEST_STACK_ECHO === "1",
    onProgress: (message) => console.log(`[fuzz stack] ${message}`),
  });
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
  if (process.env.KEEP_TEST_STATE !== "1") rmSync(FUZZ_STATE_DIR, { recursive: true, force: true });
}
