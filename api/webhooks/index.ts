// The webhooks module: /v1/webhooks, the web app's /app/webhooks/*, and the dispatcher. See README.md.
export { webhooksRouter, type WebhooksRouterDeps } from "./webhooksRouter.js";
export { appWebhooksRouter, type AppWebhooksRouterDeps } from "./appWebhooksRouter.js";
export { startDispatcher, type Dispatcher, type DispatcherDeps, type DispatcherLogger } from "./startDispatcher.js";
export {
  dispatcherDepsFrom,
  startDispatcherFromConfig,
  targetPolicyFrom,
  type WebhookConfig,
} from "./dispatcherFromConfig.js";
export { enqueueProcessingEvent, type ProcessingJob } from "./enqueueProcessingEvent.js";
export { ponderIndexReader, type IndexReader, type ChainEventRow } from "./chainEventFeed.js";
export { EVENT_NAMES, API_VERSION, type EventName } from "@credit-metered/client/http";
export { signPayload, signStandardWebhook, standardWebhookKey } from "./signPayload.js";
export { MAX_WEBHOOKS_PER_WALLET } from "./webhookLimits.js";
export type { TargetPolicy } from "./targetPolicy.js";
