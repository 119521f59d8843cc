import { defineConfig } from "vitest/config";

// The gateway's unit tests, beside its code; tests against a running stack live in test/api.
export default defineConfig({
  test: {
    include: ["api/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
