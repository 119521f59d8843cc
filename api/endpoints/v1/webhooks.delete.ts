import type { WebhookDeleted } from "@credit-metered/client/http";
import { ApiError } from "../../errors/ApiError.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { webhookIdParam } from "../../webhooks/webhookSchemas.js";
import { deleteWebhook } from "../../webhooks/webhookStore.js";
import type { Endpoint } from "../endpoint.js";
import type { WebhookEndpointDeps } from "./webhooks.create.js";
import { webhookDeletedSchema } from "@credit-metered/client/http";

/** `DELETE /v1/webhooks/{webhook_id}` (spec): another wallet's webhook answers 404 `webhook_not_found`. */
export const deleteWebhookEndpoint: Endpoint<Pick<WebhookEndpointDeps, "pool">> = {
  method: "delete",
  path: "/v1/webhooks/:webhook_id",
  access: "apiKey",
  openapi: {
    operationId: "deleteWebhook",
    summary: "Delete a webhook",
    tag: "Webhooks",
    response: { status: 200, description: "Deleted.", body: webhookDeletedSchema },
    errors: ["webhook_not_found"],
  },
  handler: (deps) => async (req, res) => {
    parseQuery(req, NO_QUERY);
    const parsed = webhookIdParam.safeParse(req.params);
    if (!parsed.success || !(await deleteWebhook(deps.pool, authOf(res).wallet, parsed.data.webhook_id))) {
      throw new ApiError("webhook_not_found", { param: "webhook_id" });
    }
    res.json({ id: parsed.data.webhook_id, object: "webhook", deleted: true } satisfies WebhookDeleted);
  },
};
