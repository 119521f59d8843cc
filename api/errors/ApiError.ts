import { errorCatalog, type ErrorCode } from "@credit-metered/client/http";

export type ErrorDetails = Record<string, string | number | boolean | null>;

export interface ApiErrorOptions {
  message?: string;
  param?: string | null;
  details?: ErrorDetails;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
}

/** The one error type of the gateway; the error middleware turns it into the spec's body. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly details: ErrorDetails | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    const entry = errorCatalog[code];
    super(options.message ?? entry.message);
    this.name = "ApiError";
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.param = options.param ?? null;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    type: string;
    param: string | null;
    docs: string;
    details?: ErrorDetails;
  };
}

export function errorBody(error: ApiError, docsUrl: string): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      type: error.type,
      param: error.param,
      docs: `${docsUrl}/errors#${error.code}`,
      ...(error.details ? { details: error.details } : {}),
    },
  };
}
