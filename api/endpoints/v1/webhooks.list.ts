import { authOf } from "../../http/middleware/authenticate.js";
import { parseQuery } from "../../http/parseQuery.js";
import { listWebhooksQuery } from "../../webhooks/webhookSchemas.js";
import { listWebhookPage } from "../../webhooks/webhookStore.js";
import type { Endpoint } from "../endpoint.js";
import type { WebhookEndpointDeps } from "./webhooks.create.js";

/** `GET /v1/webhooks` (spec): the wallet's webhooks, paginated like `GET /v1/jobs`. */
export const listWebhooksEndpoint: Endpoint<Pick<WebhookEndpointDeps, "pool">> = {
  method: "get",
  path: "/v1/webhooks",
  access: "apiKey",
  handler: (deps) => async (req, res) => {
    const query = parseQuery(req, listWebhooksQuery);
    res.json(await listWebhookPage(deps.pool, authOf(res).wallet, query));
  },
};
