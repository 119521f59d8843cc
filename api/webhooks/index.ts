// The webhooks module: the dispatcher, the stores and schemas behind /v1/webhooks and the web app's
// /app/webhooks/* (their endpoints are in api/endpoints/, re-exported here as routers for test/webhooks). See
// README.md.
export { webhooksRouter, appWebhooksRouter } from "../endpoints/webhookRouters.js";
export { startDispatcher, type Dispatcher, type DispatcherDeps, type DispatcherLogger } from "./startDispatcher.js";
export { dispatcherDepsFrom, targetPolicyFrom, type WebhookConfig } from "./dispatcherFromConfig.js";
export { enqueueProcessingEvent, type ProcessingJob } from "./enqueueProcessingEvent.js";
export { chainEventFeed, ponderIndexReader, type IndexReader, type ChainEventRow } from "./chainEventFeed.js";
export { EVENT_NAMES, API_VERSION, type EventName } from "@credit-metered/client/http";
export { signPayload, signStandardWebhook, standardWebhookKey } from "./signPayload.js";
export { MAX_WEBHOOKS_PER_WALLET } from "./webhookLimits.js";
export type { TargetPolicy } from "./targetPolicy.js";
