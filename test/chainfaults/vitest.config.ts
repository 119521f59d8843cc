import { stackSuiteConfig } from "../support/vitestBase.js";

// The chain-fault suite (issue 25): one stack on a 1 s chain, each fault injected under light load, then the
// gateway's recovery, settlement on the final chain, webhooks and the conservation audit checked. Under 3 minutes.
export default stackSuiteConfig({
  include: ["test/chainfaults/**/*.test.ts"],
  globalSetup: "test/chainfaults/globalSetup.ts",
  testTimeout: 90_000,
});
