import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { getLowCreditThreshold } from "../../webhooks/deliveryStore.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/webhooks/settings`: the low-credit threshold of `credit.low`. */
export const getWebhookSettings: Endpoint<SessionDeps> = {
  method: "get",
  path: "/app/webhooks/settings",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await sessionWallet(deps, req);
    res.json({ object: "webhook_settings", low_credit_threshold: await getLowCreditThreshold(deps.pool, wallet) });
  },
};
