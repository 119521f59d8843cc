/**
 * The one error catalog: every code the API can answer with, its HTTP status, its `type` and its default
 * message. Codes from the spec keep the spec's status; the others are this product's choices (README).
 */
export const errorCatalog = {
  // Authentication (spec)
  missing_api_key: {
    status: 401,
    type: "authentication_error",
    message: "No API key provided. Send `Authorization: Bearer <API_KEY>`.",
  },
  invalid_api_key: { status: 401, type: "authentication_error", message: "The API key does not exist or was revoked." },
  key_suspended: { status: 403, type: "permission_error", message: "The API key is suspended for a policy violation." },
  // Payment and capacity (spec)
  insufficient_credits: {
    status: 402,
    type: "payment_error",
    message: "The credit balance is too low for this request.",
  },
  // Product-defined, 402 family: the wallet's own hourly cap (CreditEscrow.setSpendingCap), not a policy limit.
  spending_cap_exceeded: {
    status: 402,
    type: "payment_error",
    message: "This request would exceed the hourly spending cap the wallet set for itself.",
  },
  no_workers_available: {
    status: 503,
    type: "capacity_error",
    message: "No worker currently hosts this model. Retry later.",
  },
  job_timeout: {
    status: 504,
    type: "timeout_error",
    message: "No worker completed the job within the job timeout; the credits were refunded.",
  },
  // Request validation (spec)
  invalid_request: { status: 400, type: "invalid_request_error", message: "The request is malformed." },
  model_not_found: { status: 400, type: "invalid_request_error", message: "The model does not exist." },
  context_length_exceeded: {
    status: 400,
    type: "invalid_request_error",
    message: "The messages exceed the model's context window.",
  },
  dispute_window_expired: {
    status: 422,
    type: "invalid_request_error",
    message: "The dispute window (60 seconds after the final output token) has closed.",
  },
  job_failed: {
    status: 502,
    type: "api_error",
    message: "The job failed before completion; the escrowed credits were returned. Safe to retry.",
  },
  // Product-defined codes for the 404/409/413/422/429/500 cases the spec leaves open
  job_not_found: { status: 404, type: "not_found_error", message: "No such job for this API key." },
  webhook_not_found: { status: 404, type: "not_found_error", message: "No such webhook for this API key." },
  webhook_limit_reached: {
    status: 409,
    type: "conflict_error",
    message: "The wallet already has the most webhooks it can have. Delete one first.",
  },
  webhook_delivery_not_found: {
    status: 404,
    type: "not_found_error",
    message: "No such webhook delivery for this wallet.",
  },
  app_session_required: { status: 401, type: "authentication_error", message: "Sign in to the web application first." },
  app_sign_in_failed: {
    status: 401,
    type: "authentication_error",
    message: "The sign-in message or its signature is not valid.",
  },
  route_not_found: { status: 404, type: "not_found_error", message: "No such endpoint." },
  method_not_allowed: {
    status: 405,
    type: "invalid_request_error",
    message: "This endpoint does not accept this HTTP method; the Allow header lists the ones it does.",
  },
  request_timeout: {
    status: 408,
    type: "invalid_request_error",
    message: "The request was not received in time.",
  },
  expectation_failed: {
    status: 417,
    type: "invalid_request_error",
    message: "The Expect header asks for something the server does not do (only 100-continue is supported).",
  },
  idempotency_key_reused: {
    status: 409,
    type: "conflict_error",
    message: "This Idempotency-Key was used with a different request body.",
  },
  idempotency_key_in_progress: {
    status: 409,
    type: "conflict_error",
    message: "A request with this Idempotency-Key is still in progress.",
  },
  dispute_already_open: { status: 409, type: "conflict_error", message: "A dispute is already open for this job." },
  job_not_disputable: { status: 422, type: "invalid_request_error", message: "Only a settled job can be disputed." },
  payload_too_large: { status: 413, type: "invalid_request_error", message: "The request body is too large." },
  unsupported_media_type: {
    status: 415,
    type: "invalid_request_error",
    message:
      "The body's Content-Encoding or charset is not supported (send JSON in UTF-8, with Content-Encoding identity, gzip, deflate, br or zstd).",
  },
  headers_too_large: {
    status: 431,
    type: "invalid_request_error",
    message: "The request headers are too large.",
  },
  rate_limited: {
    status: 429,
    type: "rate_limit_error",
    message: "Too many requests from this address. Retry after the time in the Retry-After header.",
  },
  service_unavailable: {
    status: 503,
    type: "api_error",
    message: "The service is starting or a dependency is unavailable. Retry shortly.",
  },
  internal_error: { status: 500, type: "api_error", message: "Internal error." },
} as const satisfies Record<string, { status: number; type: string; message: string }>;

export type ErrorCode = keyof typeof errorCatalog;

export const errorCodes = Object.keys(errorCatalog) as ErrorCode[];
