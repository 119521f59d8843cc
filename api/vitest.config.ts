import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["api/**/*.test.ts"],
    // *.e2e.test.ts need a running stack (api/testing/vitest.e2e.config.ts).
    exclude: ["node_modules/**", "api/**/*.e2e.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
