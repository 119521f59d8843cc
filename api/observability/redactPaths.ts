/**
 * What the gateway's logs never show (pino `redact`): credentials in request headers, the session cookie the
 * web app sets, and any field named like a key or secret one level deep (log objects such as `{ webhook: {...} }`)
 * or at the top of a log line. Paths are pino's: `*` matches one level.
 */
export const REDACT_PATHS = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  'req.headers["idempotency-key"]',
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "apiKey",
  "secret",
  "privateKey",
  "token",
  "GATEWAY_PRIVATE_KEY",
  "WORKER_GATEWAY_TOKEN",
  "DATABASE_URL",
  "*.apiKey",
  "*.api_key",
  "*.secret",
  "*.privateKey",
  "*.private_key",
  "*.token",
  "*.GATEWAY_PRIVATE_KEY",
  "*.WORKER_GATEWAY_TOKEN",
  "*.DATABASE_URL",
];
