import type pg from "pg";
import { ApiError } from "../../errors/ApiError.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { parseOrThrow } from "../../http/validate.js";
import type { TargetPolicy } from "../../webhooks/targetPolicy.js";
import { webhookUrlProblem } from "../../webhooks/validateWebhookUrl.js";
import { createWebhookBody } from "../../webhooks/webhookSchemas.js";
import { generateSecret, insertWebhook } from "../../webhooks/webhookStore.js";
import type { Endpoint } from "../endpoint.js";

/** What the `/v1/webhooks` endpoints use. */
export interface WebhookEndpointDeps {
  pool: pg.Pool;
  /** Which receiver URLs are allowed (WEBHOOK_ALLOW_*). */
  webhookPolicy: TargetPolicy;
}

/**
 * `POST /v1/webhooks` (spec, Endpoints). Webhooks belong to the authenticated key's wallet, so a rotated key keeps
 * them; a wallet has at most `MAX_WEBHOOKS_PER_WALLET` (409 `webhook_limit_reached`).
 */
export const createWebhook: Endpoint<WebhookEndpointDeps> = {
  method: "post",
  path: "/v1/webhooks",
  access: "apiKey",
  handler: (deps) => async (req, res) => {
    parseQuery(req, NO_QUERY);
    const body = parseOrThrow(createWebhookBody, req.body ?? {});
    const problem = webhookUrlProblem(body.url, deps.webhookPolicy);
    if (problem)
      throw new ApiError("invalid_request", { message: `Invalid value for 'url': ${problem}`, param: "url" });
    const generated = body.secret == null;
    const secret = body.secret ?? generateSecret();
    const webhook = await insertWebhook(deps.pool, {
      wallet: authOf(res).wallet,
      url: body.url,
      events: body.events,
      secret,
    });
    // A generated secret is shown once, here; a secret the client chose is never echoed.
    res
      .status(201)
      .location(`/v1/webhooks/${webhook.id}`)
      .json(generated ? { ...webhook, secret } : webhook);
  },
};
