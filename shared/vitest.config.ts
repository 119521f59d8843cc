import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Unit tests of the code every component shares (shared/, the client package @credit-metered/client with its HTTP
// contract's agreement with the OpenAPI document, and the import boundaries): no stack, no ports.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["shared/**/*.test.ts", "packages/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
