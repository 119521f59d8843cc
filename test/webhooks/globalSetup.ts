import { rmSync } from "node:fs";
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
  return async () => {
    await stop();
    // The stack's folder (database, logs) is kept only on request: KEEP_WEBHOOK_STACK=1.
    if (process.env["KEEP_WEBHOOK_STACK"] !== "1") rmSync(info.stateDir, { recursive: true, force: true });
  };
}
