import { stackSuiteConfig } from "../support/vitestBase.js";

// Several gateways (issue 17): one stack with two gateway processes on one chain (a block every second) and one
// database, one of them killed under load; then the conservation audit and a count of webhook deliveries per event. Under three minutes.
export default stackSuiteConfig({
  include: ["test/multigw/**/*.test.ts"],
  globalSetup: "test/multigw/globalSetup.ts",
  hookTimeout: 180_000,
});
