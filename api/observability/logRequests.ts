import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { pinoHttp } from "pino-http";

/**
 * One `info` line per answered request (pino-http), health probes left out. pino-http serializes and redacts each
 * request into a child logger before knowing whether anything will be written: with `info` off (LOG_LEVEL warn, as
 * the bench runs) that was 2.6% of the gateway's CPU for nothing (issue 26), so then no middleware is installed.
 */
export function logRequests(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled("info")) return (_req, _res, next) => next();
  return pinoHttp({
    logger,
    genReqId: (req) => String(req.headers["x-request-id"] ?? ""),
    customProps: (req) => ({ request_id: req.headers["x-request-id"] }),
    autoLogging: { ignore: (req) => req.url === "/healthz" || req.url === "/readyz" },
  });
}
