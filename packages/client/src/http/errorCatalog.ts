/** One code's facts: the body's `type`, the status, the default message, and what the docs page says of it. */
interface CatalogEntry {
  status: number;
  type: string;
  message: string;
  /** When the code is answered (the errors page of the docs site, `{docs_url}/errors#<code>`). */
  when: string;
  /** The `details` fields the body carries, each with what it holds. */
  details?: Record<string, string>;
  /** Retry advice where the spec's retry rules alone would mislead (a 4xx that succeeds later unchanged, or
   *  once the account changes); otherwise `retryAdviceOf` derives it from the rules. */
  retry?: string;
}

/**
 * The one error catalog: every code the API can answer with, its HTTP status, its `type`, its default message,
 * when it happens, its `details` fields and (where the rules need it) its retry advice. Codes from the spec keep
 * the spec's status; the others are this product's choices (README). The docs site's errors page is generated
 * from it (docs-site/).
 */
export const errorCatalog = {
  // Authentication (spec)
  missing_api_key: {
    status: 401,
    type: "authentication_error",
    message: "No API key provided. Send `Authorization: Bearer <API_KEY>`.",
    when: "The request has no `Authorization` header (spec, Authentication).",
  },
  invalid_api_key: {
    status: 401,
    type: "authentication_error",
    message: "The API key does not exist or was revoked.",
    when: "The key is not of the form `svc_live_` + 32 alphanumerics, does not exist, or was revoked (revocation is instant).",
  },
  key_suspended: {
    status: 403,
    type: "permission_error",
    message: "The API key is suspended for a policy violation.",
    when: "The key, or its wallet, is suspended for a policy violation.",
  },
  // Payment and capacity (spec)
  insufficient_credits: {
    status: 402,
    type: "payment_error",
    message: "The credit balance is too low for this request.",
    when: "The wallet's available credits are below what the request must lock in escrow for the model's tier (its price up to `max_tokens`).",
    details: {
      credits_remaining: "Credits available now.",
      credits_required: "Credits the request needed to lock (null when unknown).",
      tier: "The model's tier.",
    },
    retry:
      "Not with the same balance: fund the wallet in the web application (or ask for fewer `max_tokens`), then send it again.",
  },
  // Product-defined, 402 family: the wallet's own hourly cap (CreditEscrow.setSpendingCap), not a policy limit.
  spending_cap_exceeded: {
    status: 402,
    type: "payment_error",
    message: "This request would exceed the hourly spending cap the wallet set for itself.",
    when: "The credits locked in the last hour plus this request's lock would exceed the hourly spending cap the wallet set on the escrow contract.",
    details: {
      hourly_cap: "The wallet's cap, credits per hour.",
      credits_locked_last_hour: "Credits locked in the current window.",
      credits_required: "What this request needed to lock.",
      room_at: "ISO 8601 time at which the lock fits again (null: never, it exceeds the cap by itself).",
      retry_after: "Seconds until `room_at` (also the `Retry-After` header); null when it never fits.",
    },
    retry:
      "After `details.retry_after` seconds the same request fits under the cap; when it is null, raise the cap in the web application or ask for fewer `max_tokens`.",
  },
  no_workers_available: {
    status: 503,
    type: "capacity_error",
    message: "No worker currently hosts this model. Retry later.",
    when: "No worker currently hosts the model, or none of those hosting it could take the job; any escrow is returned.",
    details: {
      model: "The model id.",
      retry_after: "Seconds to wait before retrying (also the `Retry-After` header).",
    },
  },
  job_timeout: {
    status: 504,
    type: "timeout_error",
    message: "No worker completed the job within the job timeout; the credits were refunded.",
    when: "No worker completed the job within 120 seconds; the escrowed credits are refunded on chain and `job.timeout` fires.",
    details: {
      job_id: "The job.",
      credits_refunded: "Credits returned to the balance.",
      refund_tx: "The refund transaction (null when it is not sent yet; the job resource shows it later).",
    },
  },
  // Request validation (spec)
  invalid_request: {
    status: 400,
    type: "invalid_request_error",
    message: "The request is malformed.",
    when: "The body is not valid JSON, a field is missing or has an invalid value, or the query has a parameter the endpoint does not take (unknown, repeated, or an array form); `param` names it.",
  },
  model_not_found: {
    status: 400,
    type: "invalid_request_error",
    message: "The model does not exist.",
    when: "`model` matches no listed model id (a model is listed only while a worker hosts it).",
  },
  context_length_exceeded: {
    status: 400,
    type: "invalid_request_error",
    message: "The messages exceed the model's context window.",
    when: "The token count of `messages` leaves no room in the model's context window for a reply; `param` is `messages`.",
  },
  dispute_window_expired: {
    status: 422,
    type: "invalid_request_error",
    message: "The dispute window (60 seconds after the final output token) has closed.",
    when: "The dispute arrived more than 60 seconds after the job's final output token (the time in the worker's signed receipt).",
  },
  job_failed: {
    status: 502,
    type: "api_error",
    message: "The job failed before completion; the escrowed credits were returned. Safe to retry.",
    when: "The worker dropped or errored before completing, or the job was closed before its receipt could be settled; the escrowed credits are returned and `job.failed` fires.",
    details: { job_id: "The job.", credits_refunded: "Credits returned to the balance." },
  },
  // Product-defined codes for the 404/409/413/422/429/500 cases the spec leaves open
  job_not_found: {
    status: 404,
    type: "not_found_error",
    message: "No such job for this API key.",
    when: "No job with this id belongs to the key.",
  },
  webhook_not_found: {
    status: 404,
    type: "not_found_error",
    message: "No such webhook for this API key.",
    when: "No webhook with this id belongs to the key's wallet.",
  },
  webhook_limit_reached: {
    status: 409,
    type: "conflict_error",
    message: "The wallet already has the most webhooks it can have. Delete one first.",
    when: "The wallet already has the most webhooks it can have.",
    details: { limit: "Webhooks per wallet." },
  },
  webhook_delivery_not_found: {
    status: 404,
    type: "not_found_error",
    message: "No such webhook delivery for this wallet.",
    when: "The web application asked to replay a webhook delivery the wallet does not have.",
  },
  app_session_required: {
    status: 401,
    type: "authentication_error",
    message: "Sign in to the web application first.",
    when: "A web-application endpoint (`/app/*`) was called without a signed-in session.",
  },
  app_sign_in_failed: {
    status: 401,
    type: "authentication_error",
    message: "The sign-in message or its signature is not valid.",
    when: "The Sign-In with Ethereum message or its signature did not verify (wrong domain, nonce, chain, expiry or signer).",
  },
  route_not_found: {
    status: 404,
    type: "not_found_error",
    message: "No such endpoint.",
    when: "No endpoint has this path (e.g. an unknown path under `/v1/`).",
  },
  method_not_allowed: {
    status: 405,
    type: "invalid_request_error",
    message: "This endpoint does not accept this HTTP method; the Allow header lists the ones it does.",
    when: "The path exists but not with this method; the `Allow` header lists the methods it takes.",
  },
  request_timeout: {
    status: 408,
    type: "invalid_request_error",
    message: "The request was not received in time.",
    when: "The request body did not arrive in time.",
    retry: "Safe to send again, over a connection that delivers the body promptly.",
  },
  expectation_failed: {
    status: 417,
    type: "invalid_request_error",
    message: "The Expect header asks for something the server does not do (only 100-continue is supported).",
    when: "The `Expect` header asks for something other than `100-continue`.",
  },
  idempotency_key_reused: {
    status: 409,
    type: "conflict_error",
    message: "This Idempotency-Key was used with a different request body.",
    when: "The `Idempotency-Key` was used in the last 24 hours with a different request body.",
  },
  idempotency_key_in_progress: {
    status: 409,
    type: "conflict_error",
    message: "A request with this Idempotency-Key is still in progress.",
    when: "A request with this `Idempotency-Key` is still running.",
    retry:
      "Retry the same request once the first one has finished: it then replays the first answer (with `Idempotent-Replayed: true`).",
  },
  dispute_already_open: {
    status: 409,
    type: "conflict_error",
    message: "A dispute is already open for this job.",
    when: "The job is already `disputed`.",
  },
  job_not_disputable: {
    status: 422,
    type: "invalid_request_error",
    message: "Only a settled job can be disputed.",
    when: "The job is not `settled` (still running, failed or refunded).",
  },
  payload_too_large: {
    status: 413,
    type: "invalid_request_error",
    message: "The request body is too large.",
    when: "The body exceeds the gateway's size limit (1 MB by default).",
  },
  unsupported_media_type: {
    status: 415,
    type: "invalid_request_error",
    message:
      "The body's Content-Encoding or charset is not supported (send JSON in UTF-8, with Content-Encoding identity, gzip, deflate, br or zstd).",
    when: "The body's `Content-Encoding` or charset is one the gateway does not read.",
  },
  headers_too_large: {
    status: 431,
    type: "invalid_request_error",
    message: "The request headers are too large.",
    when: "The request's headers exceed the server's limit.",
  },
  rate_limited: {
    status: 429,
    type: "rate_limit_error",
    message: "Too many requests from this address. Retry after the time in the Retry-After header.",
    when: "Too many requests from one IP address in a short window (the per-IP burst limit; not a capacity limit).",
    retry: "Retry after the seconds in the `Retry-After` header: the same request then succeeds.",
  },
  service_unavailable: {
    status: 503,
    type: "api_error",
    message: "The service is starting or a dependency is unavailable. Retry shortly.",
    when: "The gateway is starting, or a dependency (chain node, index, database) did not answer in time.",
    details: { retry_after: "Seconds to wait before retrying (also the `Retry-After` header)." },
  },
  internal_error: {
    status: 500,
    type: "api_error",
    message: "Internal error.",
    when: "An unexpected error in the gateway; any escrow of the request is returned.",
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof errorCatalog;

export const errorCodes = Object.keys(errorCatalog) as ErrorCode[];

/**
 * The retry advice for a code, by the spec's retry rules (Errors): every 5xx and `no_workers_available` are safe to
 * retry, `no_workers_available` after `details.retry_after` seconds; any other 4xx will not succeed when retried
 * with the same payload. A code whose entry carries its own `retry` says how it differs.
 */
export function retryAdviceOf(code: ErrorCode): string {
  const entry: CatalogEntry = errorCatalog[code];
  if (entry.retry) return entry.retry;
  const waits = entry.details && "retry_after" in entry.details;
  if (entry.status >= 500 || code === "no_workers_available")
    return waits
      ? "Safe to retry, after waiting `details.retry_after` seconds (also the `Retry-After` header)."
      : "Safe to retry.";
  return "Do not retry unchanged: the same request gets the same answer. Fix what the message (and `param`) names first.";
}
