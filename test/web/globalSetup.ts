import path from "node:path";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startLocalStack, stackPorts, type LocalStack } from "../../scripts/stack/startLocalStack.js";

/** This suite's ports (8800–8839) and state folder, apart from the other suites' stacks. */
export const WEB_TEST_PORT_BASE = Number(process.env.TEST_WEB_PORT_BASE ?? 8800);
const STATE_DIR = path.join(repoRoot, ".local", "test-web");

let stack: LocalStack | undefined;

/**
 * The whole local stack, web app included, with webhook retries compressed to milliseconds (a failing receiver
 * exhausts its five attempts within a second) and a short job timeout.
 */
export async function setup(project: TestProject): Promise<void> {
  stack = await startLocalStack({
    stateDir: STATE_DIR,
    ports: stackPorts(WEB_TEST_PORT_BASE),
    gatewayEnv: {
      JOB_TIMEOUT_MS: "8000",
      WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100,100,100",
      WEBHOOK_TIMEOUT_MS: "2000",
      LOG_LEVEL: "debug",
    },
    compile: process.env.TEST_STACK_COMPILE !== "0",
    echo: process.env.TEST_STACK_ECHO === "1",
    onProgress: (message) => console.log(`[web stack] ${message}`),
  });
  if (!stack.webUrl) throw new Error("the stack did not build the web app (see its logs/web-build.log)");
  const { stop: _stop, ...info } = stack;
  project.provide("stack", info);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
