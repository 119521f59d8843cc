import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { VerifyLastSequencer } from "./support/verifyLastSequencer.js";

// One real local stack for the run (test/web/globalSetup.ts): the web app served by the gateway, driven by
// Debian's Chromium through playwright-core, and the verify command against the same chain. Files run one at a
// time in one fork: they share the chain and the demo wallet.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/web/**/*.test.ts"],
    globalSetup: ["test/web/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 300_000,
    sequence: { concurrent: false, sequencer: VerifyLastSequencer },
  },
});
