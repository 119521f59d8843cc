import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Several gateways (issue 17): one stack with two gateway processes on one chain (a block every second) and one
// database, one of them killed under load; then the conservation audit and a count of webhook deliveries per event. Under three minutes.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/multigw/**/*.test.ts"],
    globalSetup: ["test/multigw/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    sequence: { concurrent: false },
  },
});
