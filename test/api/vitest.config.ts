import { runsLast } from "../support/sequencer.js";
import { stackSuiteConfig } from "../support/vitestBase.js";

// One real stack for the whole run (test/support/globalSetup.ts); the conservation audit runs after every other
// file, since it audits what they all did.
export default stackSuiteConfig({
  include: ["test/api/**/*.test.ts"],
  globalSetup: "test/support/globalSetup.ts",
  sequencer: runsLast("conservation.test.ts"),
});
