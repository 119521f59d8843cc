/**
 * The HTTP contract of the gateway, declared once in zod: request schemas (the gateway validates with them),
 * response schemas (their `z.infer` types are what the handlers build, the web app shows and the tests read), and
 * the components of the OpenAPI document generated from them (api/openapi/openapiDocument.ts). Server-free: zod and
 * plain data only, so `web/` and `test/` import the types with `import type`.
 */
export * from "./common.js";
export * from "./query.js";
export * from "./completions.js";
export * from "./models.js";
export * from "./jobs.js";
export * from "./account.js";
export * from "./webhooks.js";
export * from "./app.js";
