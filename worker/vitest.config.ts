import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Worker tests start the real worker process; this config keeps them apart from other components' suites.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["worker/**/*.test.ts"],
    testTimeout: 30_000,
    // Above startWorkerProcess's own 60 s start-up deadline, which names the worker and its output when it fails: CI
    // at a96c684 timed out a hook starting four workers at once at 30 s, while the contract suite's coverage run
    // shared the two cores.
    hookTimeout: 120_000,
  },
});
