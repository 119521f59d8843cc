// The webhook endpoints as two groups: the gateway's list (./index.ts) takes them in, and a harness that mounts only
// them (test/webhooks) gets them as routers.
import type { Router } from "express";
import type { SessionDeps } from "../app/sessionWallet.js";
import type { TargetPolicy } from "../webhooks/targetPolicy.js";
import { listWebhookDeliveries } from "./app/webhookDeliveries.list.js";
import { replayWebhookDeliveries } from "./app/webhookDeliveries.replay.js";
import { replayWebhookDelivery } from "./app/webhookDelivery.replay.js";
import { listAppWebhooks } from "./app/webhooks.list.js";
import { getWebhookSettings } from "./app/webhookSettings.get.js";
import { updateWebhookSettings } from "./app/webhookSettings.update.js";
import { routerOf, type Endpoint } from "./endpoint.js";
import { createWebhook, type WebhookEndpointDeps } from "./v1/webhooks.create.js";
import { deleteWebhookEndpoint } from "./v1/webhooks.delete.js";
import { listWebhooksEndpoint } from "./v1/webhooks.list.js";

/** `/v1/webhooks` (spec), in mounting order. */
export const V1_WEBHOOK_ENDPOINTS: readonly Endpoint<WebhookEndpointDeps>[] = [
  createWebhook,
  listWebhooksEndpoint,
  deleteWebhookEndpoint,
];

/** The web app's `/app/webhooks/*`, in mounting order. */
export const APP_WEBHOOK_ENDPOINTS: readonly Endpoint<SessionDeps>[] = [
  listAppWebhooks,
  listWebhookDeliveries,
  replayWebhookDelivery,
  replayWebhookDeliveries,
  getWebhookSettings,
  updateWebhookSettings,
];

/** `/v1/webhooks` alone (mount behind `authenticate`). */
export function webhooksRouter(deps: { pool: WebhookEndpointDeps["pool"]; policy: TargetPolicy }): Router {
  return routerOf(V1_WEBHOOK_ENDPOINTS, { pool: deps.pool, webhookPolicy: deps.policy });
}

/** `/app/webhooks/*` alone, with the session lookup that names the wallet. */
export function appWebhooksRouter(deps: SessionDeps): Router {
  return routerOf(APP_WEBHOOK_ENDPOINTS, deps);
}
