import { z } from "zod";
import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { parseOrThrow } from "../../http/validate.js";
import { setLowCreditThreshold } from "../../webhooks/deliveryStore.js";
import type { Endpoint } from "../endpoint.js";

const settingsBody = z.object({ low_credit_threshold: z.number().int().min(0).max(1_000_000_000) });

/** `PUT /app/webhooks/settings`: set the low-credit threshold of `credit.low`. */
export const updateWebhookSettings: Endpoint<SessionDeps> = {
  method: "put",
  path: "/app/webhooks/settings",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await sessionWallet(deps, req);
    const body = parseOrThrow(settingsBody, req.body ?? {});
    await setLowCreditThreshold(deps.pool, wallet, body.low_credit_threshold);
    res.json({ object: "webhook_settings", low_credit_threshold: body.low_credit_threshold });
  },
};
