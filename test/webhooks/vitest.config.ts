import { stackSuiteConfig } from "../support/vitestBase.js";

// A chain, PostgreSQL and Ponder shared by every file (globalSetup.ts) on fixed ports 8760-8789, dispatchers per test.
export default stackSuiteConfig({
  include: ["test/webhooks/**/*.test.ts"],
  globalSetup: "test/webhooks/globalSetup.ts",
  hookTimeout: 240_000,
});
