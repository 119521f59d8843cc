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
import { webhookSchema } from "@credit-metered/client/http";
import { MAX_WEBHOOKS_PER_WALLET } from "../../webhooks/webhookLimits.js";

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
  openapi: {
    operationId: "createWebhook",
    summary: `Register a webhook for the key's wallet (at most ${MAX_WEBHOOKS_PER_WALLET} per wallet)`,
    tag: "Webhooks",
    requestBody: createWebhookBody,
    response: {
      status: 201,
      description: "The webhook (with `secret` only when generated).",
      body: webhookSchema,
      headers: ["location"],
    },
    errors: ["invalid_request", "webhook_limit_reached", "payload_too_large", "unsupported_media_type"],
  },
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
