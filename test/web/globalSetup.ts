import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";
import { stackGlobalSetup } from "../support/stackGlobalSetup.js";

/** This suite's ports (8800–8839) and state folder, apart from the other suites' stacks. */
export const WEB_TEST_PORT_BASE = Number(process.env.TEST_WEB_PORT_BASE ?? 8800);

/**
 * The whole local stack, web app included, with webhook retries compressed to milliseconds (a failing receiver
 * exhausts its five attempts within a second) and a short job timeout.
 */
export const { setup, teardown } = stackGlobalSetup({
  label: "web stack",
  stateDir: path.join(repoRoot, ".local", "test-web"),
  ports: stackPorts(WEB_TEST_PORT_BASE),
  gatewayEnv: {
    JOB_TIMEOUT_MS: "8000",
    WEBHOOK_RETRY_SCHEDULE_MS: "0,100,100,100,100",
    WEBHOOK_TIMEOUT_MS: "2000",
    LOG_LEVEL: "debug",
  },
  check: (stack) => {
    if (!stack.webUrl) throw new Error("the stack did not build the web app (see its logs/web-build.log)");
  },
});
