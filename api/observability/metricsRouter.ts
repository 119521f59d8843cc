import { Router } from "express";
import type { GatewayMetrics } from "./metrics.js";

/** `GET /metrics` in Prometheus text format. No key: scrape it on a private network (README, Operations). */
export function metricsRouter(metrics: GatewayMetrics): Router {
  const router = Router();
  router.get("/metrics", async (_req, res) => {
    res.setHeader("content-type", metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  return router;
}
