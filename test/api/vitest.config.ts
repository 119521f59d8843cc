import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { ConservationLastSequencer } from "../support/sequencer.js";

// One real stack for the whole run (test/support/globalSetup.ts); files one at a time in one fork, since they
// share the chain, the gateway and the demo wallet, and the conservation audit runs after all of them.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/api/**/*.test.ts", "api/**/*.e2e.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    sequence: { concurrent: false, sequencer: ConservationLastSequencer },
  },
});
