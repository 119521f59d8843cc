import type { Request, RequestHandler } from "express";
import type { GatewayMetrics } from "./metrics.js";

/**
 * Route templates of the public API, so labels stay bounded (ids never become label values) even for answers
 * given before a route matched (401 from the key check, 429 from the burst limit).
 */
const TEMPLATES: [RegExp, string][] = [
  [/^\/v1\/jobs\/[^/]+\/dispute$/, "/v1/jobs/{job_id}/dispute"],
  [/^\/v1\/jobs\/[^/]+$/, "/v1/jobs/{job_id}"],
  [/^\/v1\/models\/.+$/, "/v1/models/{model_id}"],
  [/^\/v1\/webhooks\/[^/]+$/, "/v1/webhooks/{webhook_id}"],
];

const EXACT = new Set([
  "/v1/chat/completions",
  "/v1/jobs",
  "/v1/models",
  "/v1/account",
  "/v1/webhooks",
  "/v1/openapi.json",
  "/healthz",
  "/readyz",
  "/metrics",
]);

/** The label for a request: the matched Express route when there is one, else a known template, else "other". */
export function routeLabelOf(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof route === "string") return `${req.baseUrl}${route}`.replace(/:([a-z_]+)/g, "{$1}");
  const path = req.path;
  if (EXACT.has(path)) return path;
  for (const [pattern, template] of TEMPLATES) if (pattern.test(path)) return template;
  if (path.startsWith("/app/") || path === "/app") return "/app/*";
  return "other";
}

/** Counts every answer by route and status code and times it to the last byte (or the client leaving). */
export function observeRequests(metrics: GatewayMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    let done = false;
    const record = () => {
      if (done) return;
      done = true;
      const route = routeLabelOf(req);
      metrics.httpRequests.inc({ route, method: req.method, code: String(res.statusCode) });
      metrics.httpDuration.observe({ route, method: req.method }, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once("finish", record);
    res.once("close", record);
    next();
  };
}
