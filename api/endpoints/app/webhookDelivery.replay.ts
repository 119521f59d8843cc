import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { ApiError } from "../../errors/ApiError.js";
import { parseDeliveryId, replayDeliveries } from "../../webhooks/deliveryStore.js";
import type { Endpoint } from "../endpoint.js";

/** `POST /app/webhooks/deliveries/{delivery_id}/replay`: send one failed delivery again. */
export const replayWebhookDelivery: Endpoint<SessionDeps> = {
  method: "post",
  path: "/app/webhooks/deliveries/:delivery_id/replay",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await sessionWallet(deps, req);
    const deliveryId = parseDeliveryId(String(req.params["delivery_id"]));
    const replayed = deliveryId ? await replayDeliveries(deps.pool, wallet, { deliveryId }) : 0;
    if (replayed === 0) throw new ApiError("webhook_delivery_not_found", { param: "delivery_id" });
    res.json({ object: "replay", replayed });
  },
};
