import { stackSuiteConfig } from "../support/vitestBase.js";

// Each file starts its own chain, PostgreSQL and Ponder (test/support/startIndexedStack.ts) on fixed ports.
export default stackSuiteConfig({
  include: ["test/indexer/**/*.test.ts"],
  hookTimeout: 180_000,
});
