/**
 * The HTTP contract of the gateway (`@credit-metered/client/http`), declared once in zod: request schemas (the
 * gateway validates with them), response schemas (their `z.infer` types are what the handlers build, the web app
 * shows and the tests read), the error catalog, the webhook event names, and the components of the OpenAPI document
 * generated from them (api/openapi/openapiDocument.ts). Server-free: zod and plain data only, so `web/` and `test/`
 * import the types with `import type`.
 */
export * from "./errorCatalog.js";
export * from "./eventNames.js";
export * from "./common.js";
export * from "./query.js";
export * from "./completions.js";
export * from "./responses.js";
export * from "./models.js";
export * from "./jobs.js";
export * from "./account.js";
export * from "./webhooks.js";
export * from "./app.js";
