import { readFileSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";

/**
 * Global setup that hands the end-to-end suite (test/api) the already running dev stack of devStack.ts instead
 * of starting its own, so the gateway can be iterated on without a full stack start per run.
 */
export function setup(project: TestProject): void {
  const info = JSON.parse(readFileSync(path.join(repoRoot, ".local", "api-dev", "stack.json"), "utf8")) as Record<
    string,
    unknown
  >;
  project.provide("stack", info as never);
}
