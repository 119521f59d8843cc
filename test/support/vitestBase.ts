import { fileURLToPath } from "node:url";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import type { BaseSequencer } from "vitest/node";

/** What a suite states for itself; everything else is the same for every suite that starts real processes. */
export type SuiteOptions = {
  /** Test files, relative to the repository root. */
  include: string[];
  /** The module that starts (and stops) the suite's stack, relative to the repository root. */
  globalSetup?: string;
  /** Per test; default two minutes. */
  testTimeout?: number;
  /** Per hook (a stack or worker start); default five minutes. */
  hookTimeout?: number;
  /** File order when it matters (see runsLast in sequencer.ts); default by name. */
  sequencer?: typeof BaseSequencer;
};

/**
 * The config of a suite against real processes on fixed ports (chain, Postgres, indexer, gateways, workers,
 * browser): files run one at a time, in one fork, their tests in order, since they share the stack and its
 * wallets and a later file may audit what the earlier ones did. Paths are from the repository root.
 */
export function stackSuiteConfig({
  include,
  globalSetup,
  testTimeout = 120_000,
  hookTimeout = 300_000,
  sequencer,
}: SuiteOptions): ViteUserConfig {
  return defineConfig({
    root: fileURLToPath(new URL("../../", import.meta.url)),
    test: {
      include,
      ...(globalSetup ? { globalSetup: [globalSetup] } : {}),
      pool: "forks",
      poolOptions: { forks: { singleFork: true } },
      fileParallelism: false,
      testTimeout,
      hookTimeout,
      sequence: { concurrent: false, ...(sequencer ? { sequencer } : {}) },
    },
  });
}
