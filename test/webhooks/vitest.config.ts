import { defineConfig } from "vitest/config";

// Real processes (Hardhat node, PostgreSQL, Ponder, dispatchers) on fixed ports 8760-8789: one file at a time.
export default defineConfig({
  test: {
    include: ["test/webhooks/**/*.test.ts"],
    globalSetup: ["test/webhooks/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 240_000,
    sequence: { concurrent: false },
  },
});
