import { z } from "zod";
import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { parseOrThrow } from "../../http/validate.js";
import { replayDeliveries } from "../../webhooks/deliveryStore.js";
import { webhookId } from "../../webhooks/webhookSchemas.js";
import type { Endpoint } from "../endpoint.js";

const replayAllBody = z.object({ webhook_id: webhookId.optional() });

/** `POST /app/webhooks/deliveries/replay`: send every failed delivery again (of one webhook, or all). */
export const replayWebhookDeliveries: Endpoint<SessionDeps> = {
  method: "post",
  path: "/app/webhooks/deliveries/replay",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await sessionWallet(deps, req);
    const body = parseOrThrow(replayAllBody, req.body ?? {});
    const replayed = await replayDeliveries(deps.pool, wallet, body.webhook_id ? { webhookId: body.webhook_id } : {});
    res.json({ object: "replay", replayed });
  },
};
