import { stackSuiteConfig } from "../support/vitestBase.js";

// The chaos suite (issue 12): one real stack for the run (test/chaos/globalSetup.ts) on its own ports, faults
// injected into its processes one file at a time, each followed by the conservation audit. Under ten minutes.
export default stackSuiteConfig({
  include: ["test/chaos/**/*.test.ts"],
  globalSetup: "test/chaos/globalSetup.ts",
  testTimeout: 180_000,
});
