import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { ApiError, errorBody } from "../../errors/ApiError.js";
import { isDependencyOutage, serviceUnavailable } from "../../errors/dependencyOutage.js";

/** Unknown routes answer in the spec's error format, not Express's HTML page. */
export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError("route_not_found"));
};

/**
 * The single place that writes error bodies. Client errors raised by Express and body-parser (bad JSON, a corrupt
 * Content-Encoding, an oversized or truncated body) become spec-format 4xx answers; a dependency that did not answer
 * (chain node, index, database) becomes 503 `service_unavailable` with `retry_after`; anything else unexpected is
 * logged and becomes a generic 500 without internals.
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
  const status = clientErrorStatusOf(err);
  if (status === undefined) {
    if (isDependencyOutage(err))
      return serviceUnavailable("A dependency (chain node, index or database) did not answer in time. Retry shortly.");
    return new ApiError("internal_error");
  }
  // A 4xx raised by Express or body-parser (http-errors): the client's fault, answered in the spec's format
  // without echoing library internals (a zlib message, a stack).
  const type = typeof (err as { type?: unknown }).type === "string" ? (err as { type: string }).type : undefined;
  if (status === 413) return new ApiError("payload_too_large");
  if (status === 415) return new ApiError("unsupported_media_type");
  switch (type) {
    case "entity.parse.failed":
      return new ApiError("invalid_request", { message: "The body is not valid JSON.", param: null });
    case "request.aborted":
    case "request.size.invalid":
      return new ApiError("invalid_request", {
        message: "The body ended before its Content-Length; send the whole body.",
        param: null,
      });
    default:
      break;
  }
  if (isDecompressionError(err)) {
    return new ApiError("invalid_request", {
      message: "The body could not be decoded with its Content-Encoding (corrupt or truncated).",
      param: null,
    });
  }
  return new ApiError("invalid_request", { message: "The request could not be read.", param: null });
}

/** The status of an http-errors style client error (400–499), as Express and body-parser raise them. */
function clientErrorStatusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const value = typeof status === "number" ? status : typeof statusCode === "number" ? statusCode : undefined;
  return value !== undefined && value >= 400 && value < 500 ? value : undefined;
}

function isDecompressionError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  // zlib (gzip, deflate): Z_*; brotli: ERR__*; zstd: ZSTD_*.
  return typeof code === "string" && /^(Z_|ERR__|ZSTD_)/.test(code);
}
