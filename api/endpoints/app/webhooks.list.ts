import { sessionWallet, type SessionDeps } from "../../app/sessionWallet.js";
import { listWebhooks } from "../../webhooks/webhookStore.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/webhooks`: the signed-in wallet's webhooks (the web app's webhook views). */
export const listAppWebhooks: Endpoint<SessionDeps> = {
  method: "get",
  path: "/app/webhooks",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    res.json({ object: "list", data: await listWebhooks(deps.pool, await sessionWallet(deps, req)) });
  },
};
