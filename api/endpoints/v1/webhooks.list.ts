import { authOf } from "../../http/middleware/authenticate.js";
import { parseQuery } from "../../http/parseQuery.js";
import { listWebhooksQuery } from "../../webhooks/webhookSchemas.js";
import { listWebhookPage } from "../../webhooks/webhookStore.js";
import type { Endpoint } from "../endpoint.js";
import type { WebhookEndpointDeps } from "./webhooks.create.js";
import { webhookListSchema } from "@credit-metered/client/http";

/** `GET /v1/webhooks` (spec): the wallet's webhooks, paginated like `GET /v1/jobs`. */
export const listWebhooksEndpoint: Endpoint<Pick<WebhookEndpointDeps, "pool">> = {
  method: "get",
  path: "/v1/webhooks",
  access: "apiKey",
  openapi: {
    operationId: "listWebhooks",
    summary: "The wallet's webhooks, newest first, paginated like the jobs",
    description:
      "Each query parameter is given at most once, as a plain value; anything else (a repeated or bracketed " +
      "parameter, an unknown name) is `invalid_request` naming it.",
    tag: "Webhooks",
    query: listWebhooksQuery,
    response: { status: 200, description: "A page of webhooks.", body: webhookListSchema },
    errors: ["invalid_request"],
  },
  handler: (deps) => async (req, res) => {
    const query = parseQuery(req, listWebhooksQuery);
    res.json(await listWebhookPage(deps.pool, authOf(res).wallet, query));
  },
};
