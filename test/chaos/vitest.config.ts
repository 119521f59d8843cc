import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The chaos suite (issue 12): one real stack for the run (test/chaos/globalSetup.ts) on its own ports, faults
// injected into its processes one file at a time, each followed by the conservation audit. Under ten minutes.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/chaos/**/*.test.ts"],
    globalSetup: ["test/chaos/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 300_000,
    sequence: { concurrent: false },
  },
});
