import express, { type Router } from "express";
import type { Logger } from "pino";
import { assertJsonDepth } from "./jsonDepth.js";
import { errorHandler, notFoundHandler } from "./middleware/errorHandler.js";
import { hostHeader } from "./middleware/hostHeader.js";
import { literalPercent } from "./middleware/literalPercent.js";
import { methodNotAllowed } from "./middleware/methodNotAllowed.js";
import { requestId } from "./middleware/requestId.js";

export interface AppOptions {
  docsUrl: string;
  bodyLimit: string;
  logger: Logger;
  /** TRUSTED_PROXIES: the proxies whose `X-Forwarded-For` names the client; empty trusts none. */
  trustedProxies?: string[];
  /** Per-IP burst limiter, applied before everything but the request id. */
  rateLimit?: express.RequestHandler;
  /** Routers mounted in order (health, metrics, docs, /v1, /app). */
  routers: Router[];
}

/**
 * The gateway's Express app: request id, burst limit, JSON bodies, routes, then 405 (known path, other method),
 * 404 and spec-format errors.
 */
export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // The client address (burst limit, logs) comes from a forwarding header only when a configured proxy sent it.
  app.set("trust proxy", options.trustedProxies && options.trustedProxies.length > 0 ? options.trustedProxies : false);
  // A request with no or two Host headers is refused as the HTTP server's own answer, before it gets a request id.
  app.use(hostHeader);
  app.use(requestId);
  app.use(literalPercent);
  if (options.rateLimit) app.use(options.rateLimit);
  app.use(
    express.json({
      limit: options.bodyLimit,
      type: ["application/json", "application/*+json"],
      // Depth is checked on the raw bytes before JSON.parse, which is what a deeply nested body would cost.
      verify: (_req, _res, body) => assertJsonDepth(body),
    }),
  );
  for (const router of options.routers) app.use(router);
  app.use(methodNotAllowed(app));
  app.use(notFoundHandler);
  app.use(errorHandler(options.docsUrl, options.logger));
  return app;
}
