import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Unit tests of the code the gateway and the workers share (shared/): no stack, no ports.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["shared/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
