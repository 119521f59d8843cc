import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// One real stack (globalSetup.ts); the properties run in order, then the health check and the conservation audit.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/fuzz/**/*.test.ts"],
    globalSetup: ["test/fuzz/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 30 * 60_000,
    hookTimeout: 300_000,
  },
});
