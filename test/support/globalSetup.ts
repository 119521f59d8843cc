import { stackGlobalSetup } from "./stackGlobalSetup.js";
import { TEST_JOB_TIMEOUT_MS, TEST_STATE_DIR, testPorts } from "./testStackOptions.js";

/** One whole stack (chain, contracts, Postgres, indexer, gateway, worker pool, demo key) for the API suite. */
export const { setup, teardown } = stackGlobalSetup({
  label: "stack",
  stateDir: TEST_STATE_DIR,
  ports: testPorts,
  // A request timeout shorter than the job timeout, so a stream outliving it shows it never cuts answers.
  gatewayEnv: { JOB_TIMEOUT_MS: String(TEST_JOB_TIMEOUT_MS), LOG_LEVEL: "debug", HTTP_REQUEST_TIMEOUT_MS: "5000" },
  // The API suite does not use the web app.
  buildWeb: false,
});
