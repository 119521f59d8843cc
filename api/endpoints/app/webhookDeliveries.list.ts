import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { parseQuery } from "../../http/parseQuery.js";
import { listFailedDeliveries } from "../../webhooks/deliveryStore.js";
import { listDeliveriesQuery } from "../../webhooks/webhookSchemas.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/webhooks/deliveries`: the wallet's failed deliveries with their attempts and responses. */
export const listWebhookDeliveries: Endpoint<SessionDeps> = {
  method: "get",
  path: "/app/webhooks/deliveries",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await sessionWallet(deps, req);
    const query = parseQuery(req, listDeliveriesQuery);
    const data = await listFailedDeliveries(deps.pool, wallet, {
      limit: query.limit,
      ...(query.webhook_id ? { webhookId: query.webhook_id } : {}),
    });
    res.json({ object: "list", data });
  },
};
