// The webhook endpoints alone, as routers, for a harness that mounts only them (test/webhooks): the gateway mounts
// them from the list in ./index.ts.
import type { Router } from "express";
import type { SessionDeps } from "../app/sessionWallet.js";
import type { TargetPolicy } from "../webhooks/targetPolicy.js";
import { listWebhookDeliveries } from "./app/webhookDeliveries.list.js";
import { replayWebhookDeliveries } from "./app/webhookDeliveries.replay.js";
import { replayWebhookDelivery } from "./app/webhookDelivery.replay.js";
import { listAppWebhooks } from "./app/webhooks.list.js";
import { getWebhookSettings } from "./app/webhookSettings.get.js";
import { updateWebhookSettings } from "./app/webhookSettings.update.js";
import { routerOf } from "./endpoint.js";
import { createWebhook, type WebhookEndpointDeps } from "./v1/webhooks.create.js";
import { deleteWebhookEndpoint } from "./v1/webhooks.delete.js";
import { listWebhooksEndpoint } from "./v1/webhooks.list.js";

/** `/v1/webhooks` (mount behind `authenticate`). */
export function webhooksRouter(deps: { pool: WebhookEndpointDeps["pool"]; policy: TargetPolicy }): Router {
  return routerOf<WebhookEndpointDeps>([createWebhook, listWebhooksEndpoint, deleteWebhookEndpoint], {
    pool: deps.pool,
    webhookPolicy: deps.policy,
  });
}

/** `/app/webhooks/*`, with the session lookup that names the wallet. */
export function appWebhooksRouter(deps: SessionDeps): Router {
  return routerOf<SessionDeps>(
    [
      listAppWebhooks,
      listWebhookDeliveries,
      replayWebhookDelivery,
      replayWebhookDeliveries,
      getWebhookSettings,
      updateWebhookSettings,
    ],
    deps,
  );
}
