import { Router } from "express";
import type { WebhookDeleted } from "@credit-metered/client/http";
import type pg from "pg";
import { ApiError } from "../errors/ApiError.js";
import { authOf } from "../http/middleware/authenticate.js";
import { parseOrThrow } from "../http/validate.js";
import type { TargetPolicy } from "./targetPolicy.js";
import { webhookUrlProblem } from "./validateWebhookUrl.js";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";
import { createWebhookBody, listWebhooksQuery, webhookIdParam } from "./webhookSchemas.js";
import { deleteWebhook, generateSecret, insertWebhook, listWebhookPage } from "./webhookStore.js";

export interface WebhooksRouterDeps {
  pool: pg.Pool;
  policy: TargetPolicy;
}

/**
 * `/v1/webhooks` (spec, Endpoints). Mount behind `authenticate`: webhooks belong to the authenticated key's
 * wallet, so a rotated key keeps them, and another wallet's webhook answers 404 `webhook_not_found`. A wallet has
 * at most `MAX_WEBHOOKS_PER_WALLET` (409 `webhook_limit_reached`); the list is paginated like `GET /v1/jobs`.
 */
export function webhooksRouter(deps: WebhooksRouterDeps): Router {
  const router = Router();

  router.post("/v1/webhooks", async (req, res) => {
    parseQuery(req, NO_QUERY);
    const body = parseOrThrow(createWebhookBody, req.body ?? {});
    const problem = webhookUrlProblem(body.url, deps.policy);
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
  });

  router.get("/v1/webhooks", async (req, res) => {
    const query = parseQuery(req, listWebhooksQuery);
    res.json(await listWebhookPage(deps.pool, authOf(res).wallet, query));
  });

  router.delete("/v1/webhooks/:webhook_id", async (req, res) => {
    parseQuery(req, NO_QUERY);
    const parsed = webhookIdParam.safeParse(req.params);
    if (!parsed.success || !(await deleteWebhook(deps.pool, authOf(res).wallet, parsed.data.webhook_id))) {
      throw new ApiError("webhook_not_found", { param: "webhook_id" });
    }
    res.json({ id: parsed.data.webhook_id, object: "webhook", deleted: true } satisfies WebhookDeleted);
  });

  return router;
}
