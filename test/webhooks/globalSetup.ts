import type { TestProject } from "vitest/node";
import { startWebhookStack, type WebhookStackInfo } from "./support/startWebhookStack.js";

declare module "vitest" {
  export interface ProvidedContext {
    webhookStack: WebhookStackInfo;
  }
}

/** One chain + database + indexer for every webhook test file (each test uses its own wallets and schema). */
export default async function setup(project: TestProject) {
  const stack = await startWebhookStack();
  const { stop, ...info } = stack;
  project.provide("webhookStack", info);
  // The stack's folder (database, logs) is removed with it unless KEEP_TEST_STATE=1.
  return stop;
}
