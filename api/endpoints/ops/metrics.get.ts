import type { GatewayDeps } from "../../deps.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /metrics` in Prometheus text format. No key: scrape it on a private network (README, Operations). */
export const getMetrics: Endpoint<Pick<GatewayDeps, "metrics">> = {
  method: "get",
  path: "/metrics",
  access: "open",
  handler:
    ({ metrics }) =>
    async (_req, res) => {
      res.setHeader("content-type", metrics.registry.contentType);
      res.send(await metrics.registry.metrics());
    },
};
