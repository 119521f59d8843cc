import { Router, type Request } from "express";
import type pg from "pg";
import { z } from "zod";
import { ApiError } from "../errors/ApiError.js";
import { parseQuery } from "../http/parseQuery.js";
import { parseOrThrow } from "../http/validate.js";
import {
  getLowCreditThreshold,
  listFailedDeliveries,
  parseDeliveryId,
  replayDeliveries,
  setLowCreditThreshold,
} from "./deliveryStore.js";
import { listDeliveriesQuery, webhookId } from "./webhookSchemas.js";
import { listWebhooks } from "./webhookStore.js";

export interface AppWebhooksRouterDeps {
  pool: pg.Pool;
  /**
   * The signed-in wallet of a web-app request, or null when there is none (→ 401 `app_session_required`).
   * PLACEHOLDER until the SIWE session exists: the gateway plugs its session lookup in here.
   */
  resolveWallet: (req: Request) => Promise<string | null>;
}

const replayAllBody = z.object({ webhook_id: webhookId.optional() });
const settingsBody = z.object({ low_credit_threshold: z.number().int().min(0).max(1_000_000_000) });

/**
 * The web application's webhook views (`/app/webhooks/*`): the wallet's webhooks, failed deliveries with their
 * attempts and responses, replay one or all, and the low-credit threshold of `credit.low`.
 */
export function appWebhooksRouter(deps: AppWebhooksRouterDeps): Router {
  const router = Router();
  const walletOf = async (req: Request): Promise<string> => {
    const wallet = await deps.resolveWallet(req);
    if (!wallet) throw new ApiError("app_session_required");
    return wallet;
  };

  router.get("/app/webhooks", async (req, res) => {
    res.json({ object: "list", data: await listWebhooks(deps.pool, await walletOf(req)) });
  });

  router.get("/app/webhooks/deliveries", async (req, res) => {
    const wallet = await walletOf(req);
    const query = parseQuery(req, listDeliveriesQuery);
    const data = await listFailedDeliveries(deps.pool, wallet, {
      limit: query.limit,
      ...(query.webhook_id ? { webhookId: query.webhook_id } : {}),
    });
    res.json({ object: "list", data });
  });

  router.post("/app/webhooks/deliveries/:delivery_id/replay", async (req, res) => {
    const wallet = await walletOf(req);
    const deliveryId = parseDeliveryId(String(req.params["delivery_id"]));
    const replayed = deliveryId ? await replayDeliveries(deps.pool, wallet, { deliveryId }) : 0;
    if (replayed === 0) throw new ApiError("webhook_delivery_not_found", { param: "delivery_id" });
    res.json({ object: "replay", replayed });
  });

  router.post("/app/webhooks/deliveries/replay", async (req, res) => {
    const wallet = await walletOf(req);
    const body = parseOrThrow(replayAllBody, req.body ?? {});
    const replayed = await replayDeliveries(deps.pool, wallet, body.webhook_id ? { webhookId: body.webhook_id } : {});
    res.json({ object: "replay", replayed });
  });

  router.get("/app/webhooks/settings", async (req, res) => {
    const wallet = await walletOf(req);
    res.json({ object: "webhook_settings", low_credit_threshold: await getLowCreditThreshold(deps.pool, wallet) });
  });

  router.put("/app/webhooks/settings", async (req, res) => {
    const wallet = await walletOf(req);
    const body = parseOrThrow(settingsBody, req.body ?? {});
    await setLowCreditThreshold(deps.pool, wallet, body.low_credit_threshold);
    res.json({ object: "webhook_settings", low_credit_threshold: body.low_credit_threshold });
  });

  return router;
}
