import { defineConfig } from "vitest/config";

// Real processes (Hardhat node, PostgreSQL, Ponder) on fixed ports: one file at a time, in one fork.
export default defineConfig({
  test: {
    include: ["test/indexer/**/*.test.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    sequence: { concurrent: false },
  },
});
