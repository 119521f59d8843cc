import { stackGlobalSetup } from "./stackGlobalSetup.js";
import { TEST_JOB_TIMEOUT_MS, TEST_STATE_DIR, testPorts } from "./testStackOptions.js";

/** One whole stack (chain, contracts, Postgres, indexer, gateway, worker pool, demo key) for the API suite. */
export const { setup, teardown } = stackGlobalSetup({
  label: "stack",
  stateDir: TEST_STATE_DIR,
  ports: testPorts,
  gatewayEnv: { JOB_TIMEOUT_MS: String(TEST_JOB_TIMEOUT_MS), LOG_LEVEL: "debug" },
  // The API suite does not use the web app.
  buildWeb: false,
});
