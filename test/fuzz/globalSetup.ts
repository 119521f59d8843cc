import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";
import { stackGlobalSetup } from "../support/stackGlobalSetup.js";

/**
 * The fuzzer's own stack (ports 9900–9919 unless FUZZ_STACK_PORT_BASE says otherwise, `.local/test-fuzz`): the whole
 * product, web app included (unknown paths must not fall through to it), with production webhook target rules
 * (no private, loopback or reserved targets), a burst limit the fuzzer never reaches, a short job timeout and
 * fast simulated workers. Provides `stack` like the other suites, so test/support works.
 */
export const FUZZ_STATE_DIR = path.join(repoRoot, ".local", "test-fuzz");

export const { setup, teardown } = stackGlobalSetup({
  label: "fuzz stack",
  stateDir: FUZZ_STATE_DIR,
  removeStateAfter: true,
  ports: stackPorts(Number(process.env.FUZZ_STACK_PORT_BASE ?? 9900)),
  gatewayEnv: {
    JOB_TIMEOUT_MS: "8000",
    RATE_LIMIT_MAX: "100000000",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "false",
    WEBHOOK_ALLOW_HTTP_LOOPBACK: "false",
    LOG_LEVEL: "info",
  },
  workerDefaults: { ttftMs: 5, tokensPerSecond: 2_000, minOutputTokens: 4, maxOutputTokens: 24 },
  buildWeb: process.env.FUZZ_BUILD_WEB !== "0",
});
