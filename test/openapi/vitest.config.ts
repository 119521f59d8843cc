import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// One real stack (globalSetup.ts); the file's tests run in order since later ones read what earlier ones did.
export default defineConfig({
  root: fileURLToPath(new URL("../../", import.meta.url)),
  test: {
    include: ["test/openapi/**/*.test.ts"],
    globalSetup: ["test/openapi/globalSetup.ts"],
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
