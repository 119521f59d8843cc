import { inject } from "vitest";
import type { StackInfo } from "../../scripts/stack/startLocalStack.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The stack the global setup started for this run (test/support/globalSetup.ts). */
    stack: StackInfo;
  }
}

/** The running test stack: URLs, contracts, the demo wallet and key, the worker token. */
export function stackInfo(): StackInfo {
  return inject("stack");
}
