import { runsLast } from "../support/sequencer.js";
import { stackSuiteConfig } from "../support/vitestBase.js";

// One real local stack for the run (test/web/globalSetup.ts): the web app served by the gateway, driven by
// Debian's Chromium through playwright-core, and the verify command against the same chain. The verify file runs
// last: its timeout-refund case moves chain time ahead of the wall clock, after which no settled job could be
// disputed any more (the dispute window is checked against block time).
export default stackSuiteConfig({
  include: ["test/web/**/*.test.ts"],
  globalSetup: "test/web/globalSetup.ts",
  testTimeout: 180_000,
  sequencer: runsLast("verify.test.ts"),
});
