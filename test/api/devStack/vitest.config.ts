import { runsLast } from "../../support/sequencer.js";
import { stackSuiteConfig } from "../../support/vitestBase.js";

// The API suite against the already running dev stack of devStack.ts (see there) instead of a stack of its own.
export default stackSuiteConfig({
  include: ["test/api/**/*.test.ts"],
  globalSetup: "test/api/devStack/globalSetup.ts",
  sequencer: runsLast("conservation.test.ts"),
});
