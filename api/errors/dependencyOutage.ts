import { BaseError, HttpRequestError, TimeoutError } from "viem";
import { IndexUnavailableError } from "../readModel/indexClient.js";
import { DeadlineExceededError } from "../runtime/withDeadline.js";
import { ApiError } from "./ApiError.js";

/** What a client is told to wait before retrying when a dependency (chain node, index, database) is away. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** 503 `service_unavailable` with `retry_after` (details and `Retry-After`): safe to retry (spec, Errors). */
export function serviceUnavailable(message: string, retryAfter = DEPENDENCY_RETRY_AFTER_SECONDS): ApiError {
  return new ApiError("service_unavailable", {
    message,
    details: { retry_after: retryAfter },
    headers: { "retry-after": String(retryAfter) },
  });
}

const PG_CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "57P01", "57P02", "57P03"]);

/**
 * True when `error` (or anything in its cause chain) says a dependency did not answer — a timeout, a refused or
 * reset connection, an unavailable index — rather than that the request or the code is wrong.
 */
export function isDependencyOutage(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof IndexUnavailableError || current instanceof DeadlineExceededError) return true;
    if (current instanceof TimeoutError) return true;
    // No HTTP status: the node never answered (refused, reset); 5xx: it answered that it cannot serve now.
    if (current instanceof HttpRequestError && (current.status === undefined || current.status >= 500)) return true;
    if (typeof current === "object") {
      const { code, message } = current as { code?: unknown; message?: unknown };
      if (typeof code === "string" && PG_CONNECTION_CODES.has(code)) return true;
      if (
        typeof message === "string" &&
        /Query read timeout|timeout exceeded when trying to connect|Connection terminated|fetch failed|socket hang up/i.test(
          message,
        )
      )
        return true;
    }
    current = current instanceof BaseError || current instanceof Error ? current.cause : undefined;
  }
  return false;
}
