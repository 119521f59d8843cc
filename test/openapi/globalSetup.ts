import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";
import { stackGlobalSetup } from "../support/stackGlobalSetup.js";

/**
 * Its own stack (ports 8850–8869, `.local/test-openapi`), so it runs next to the API suite. The gateway logs at
 * debug level: the redaction test reads that log. Provides `stack` like the API suite, so test/support works.
 */
export const OPENAPI_STATE_DIR = path.join(repoRoot, ".local", "test-openapi");

export const { setup, teardown } = stackGlobalSetup({
  label: "stack",
  stateDir: OPENAPI_STATE_DIR,
  removeStateAfter: true,
  ports: stackPorts(Number(process.env.OPENAPI_STACK_PORT_BASE ?? 8850)),
  gatewayEnv: { LOG_LEVEL: "debug", JOB_TIMEOUT_MS: "8000" },
});
