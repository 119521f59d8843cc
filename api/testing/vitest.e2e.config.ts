import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// `npx vitest run --config api/testing/vitest.e2e.config.ts test/api/<file>.test.ts` with devStack.ts running.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/api/**/*.test.ts", "api/**/*.e2e.test.ts"],
    globalSetup: ["api/testing/e2eAgainstDevStack.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
