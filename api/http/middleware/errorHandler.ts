import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { ApiError, errorBody } from "../../errors/ApiError.js";
import { isDependencyOutage, serviceUnavailable } from "../../errors/dependencyOutage.js";

/** Unknown routes answer in the spec's error format, not Express's HTML page. */
export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError("route_not_found"));
};

/**
 * The single place that writes error bodies. Body-parser failures become `invalid_request`/`payload_too_large`;
 * a dependency that did not answer (chain node, index, database) becomes 503 `service_unavailable` with
 * `retry_after`; anything else unexpected is logged and becomes a generic 500 without internals.
 */
export function errorHandler(docsUrl: string, logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const apiError = toApiError(err);
    if (apiError.status >= 500 && apiError.code === "internal_error") {
      logger.error({ err, requestId: req.headers["x-request-id"], path: req.path }, "unhandled error");
    } else if (apiError.code === "service_unavailable" && !(err instanceof ApiError)) {
      logger.warn({ err, requestId: req.headers["x-request-id"], path: req.path }, "dependency unavailable");
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    res.status(apiError.status).json(errorBody(apiError, docsUrl));
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isBodyParserError(err)) {
    if (err.type === "entity.too.large") return new ApiError("payload_too_large");
    if (err.type === "entity.parse.failed") {
      return new ApiError("invalid_request", { message: "The body is not valid JSON.", param: null });
    }
    return new ApiError("invalid_request", { message: err.message });
  }
  if (isDependencyOutage(err))
    return serviceUnavailable("A dependency (chain node, index or database) did not answer in time. Retry shortly.");
  return new ApiError("internal_error");
}

interface BodyParserError {
  type: string;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === "object" && err !== null && "type" in err && typeof (err as { type: unknown }).type === "string"
  );
}
