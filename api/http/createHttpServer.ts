import { createServer, type RequestListener, type Server } from "node:http";
import type { GatewayConfig } from "../config.js";
import { answerOutsideRoutes } from "./clientError.js";

/** How often Node checks the header and request timeouts (its default, 30 s, made them minutes late). */
export const TIMEOUT_CHECK_INTERVAL_MS = 500;

/**
 * The gateway's HTTP server (issue 23): the time to RECEIVE a request is bounded — headers within
 * HTTP_HEADERS_TIMEOUT_MS, the whole request within HTTP_REQUEST_TIMEOUT_MS, else 408 `request_timeout` — and an
 * idle kept-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS. None of these applies once a request is in,
 * so an answer, a long stream included, is never cut by them. Every answer written outside Express is in the
 * spec's error format (clientError.ts); Node's own `Host` check is off because it answered with an empty body
 * (middleware/hostHeader.ts answers instead).
 */
export function createHttpServer(
  app: RequestListener,
  config: Pick<
    GatewayConfig,
    "HTTP_HEADERS_TIMEOUT_MS" | "HTTP_REQUEST_TIMEOUT_MS" | "HTTP_KEEP_ALIVE_TIMEOUT_MS" | "DOCS_URL"
  >,
): Server {
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: Math.min(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS),
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    app,
  );
  answerOutsideRoutes(server, config.DOCS_URL);
  return server;
}
