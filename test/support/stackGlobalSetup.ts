import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startLocalStack, type LocalStack, type LocalStackOptions } from "../../scripts/stack/startLocalStack.js";
import { MAX_LOCAL_GATEWAYS } from "../../scripts/deploy/localGateways.js";

/** Spare catalog models per test shape a test stack lists (test/support/workers.ts claims them). */
export const TEST_SPARE_MODELS_PER_SHAPE = 6;
/** Spare gateway signers (roles from deployment, no process) a test stack has for tests' own gateways. */
export const TEST_SPARE_GATEWAY_SIGNERS = 3;

export type StackGlobalSetupOptions = Omit<LocalStackOptions, "compile" | "echo" | "onProgress"> & {
  /** Prefix of the stack's progress lines, e.g. "web stack". */
  label: string;
  /** Remove the state folder after the run unless KEEP_TEST_STATE=1 (default: keep it, its logs explain a failure). */
  removeStateAfter?: boolean;
  /** Runs before the stack starts (e.g. clearing what an earlier run left in the state folder). */
  beforeStart?: () => void;
  /** Refuses a stack that lacks what the suite needs (e.g. the web app). */
  check?: (stack: LocalStack) => void;
};

/**
 * A vitest global setup (`export const { setup, teardown } = stackGlobalSetup({...})`) that starts one whole local
 * stack for the run and provides its `stack` info (test/support/stackInfo.ts). Every suite compiles first unless
 * TEST_STACK_COMPILE=0 (a no-op when the artifacts are current) and echoes the children's output when
 * TEST_STACK_ECHO=1.
 */
export function stackGlobalSetup({
  label,
  removeStateAfter = false,
  beforeStart,
  check,
  ...options
}: StackGlobalSetupOptions): {
  setup: (project: TestProject) => Promise<void>;
  teardown: () => Promise<void>;
} {
  let stack: LocalStack | undefined;
  return {
    async setup(project) {
      beforeStart?.();
      stack = await startLocalStack({
        // Catalog changes and role grants wait 2 days, which a stack whose chain follows the wall clock never
        // sees: tests claim spare models (test/support/workers.ts) and use a spare gateway signer instead.
        spareModels: TEST_SPARE_MODELS_PER_SHAPE,
        spareGatewaySigners: Math.min(TEST_SPARE_GATEWAY_SIGNERS, MAX_LOCAL_GATEWAYS - (options.gateways ?? 1)),
        ...options,
        compile: process.env.TEST_STACK_COMPILE !== "0",
        echo: process.env.TEST_STACK_ECHO === "1",
        onProgress: (message) => console.log(`[${label}] ${message}`),
      });
      check?.(stack);
      const { stop: _stop, ...info } = stack;
      project.provide("stack", info);
    },
    async teardown() {
      await stack?.stop();
      if (removeStateAfter && process.env.KEEP_TEST_STATE !== "1") {
        rmSync(options.stateDir, { recursive: true, force: true });
      }
    },
  };
}
