import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Worker tests start the real worker process; this config keeps them apart from other components' suites.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["worker/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
