import { stackSuiteConfig } from "../support/vitestBase.js";

// One real stack (globalSetup.ts); the properties run in order, then the health check and the conservation audit.
export default stackSuiteConfig({
  include: ["test/fuzz/**/*.test.ts"],
  globalSetup: "test/fuzz/globalSetup.ts",
  testTimeout: 30 * 60_000,
});
