import { z } from "zod";
import {
  accountSchema,
  addressSchema,
  chatCompletionChunkSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  chatMessageSchema,
  completionUsageSchema,
  components,
  createWebhookBody,
  disputeRequestSchema,
  disputeResultSchema,
  errorBodySchema,
  eventNameSchema,
  jobIdSchema,
  jobListSchema,
  jobSchema,
  listJobsQuerySchema,
  listWebhooksQuery,
  modelListSchema,
  modelSchema,
  responseCreateRequestSchema,
  responseInputMessageSchema,
  responseObjectSchema,
  responseOutputMessageSchema,
  responseStreamEventSchema,
  responseUsageSchema,
  txHashSchema,
  usageSchema,
  webhookDeletedSchema,
  webhookListSchema,
  webhookSchema,
  errorCatalog,
  type ErrorCode,
} from "@credit-metered/client/http";
import { MAX_JSON_DEPTH } from "../http/jsonDepth.js";
import { MAX_WEBHOOKS_PER_WALLET } from "../webhooks/webhookLimits.js";
import { STALE_HEADER } from "../readModel/staleness.js";

/**
 * The OpenAPI 3.1 document of the `/v1` API. Its schemas are generated from the HTTP contract (@credit-metered/client/http, zod 4's
 * `z.toJSONSchema`), the schemas the gateway validates requests with and types its answers by; the operations,
 * headers, error lists (from the error catalog) and prose are written here. Committed as `api/openapi/openapi.json` by `npm run openapi`;
 * `npm run lint:openapi` fails when the two differ or the document does not lint. The gateway serves the
 * committed file at `GET /v1/openapi.json` (no key), and the e2e suite validates real responses against it.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The components, in the document's order: every schema of the contract that carries an `id`. */
const COMPONENTS: z.ZodType[] = [
  errorBodySchema,
  usageSchema,
  completionUsageSchema,
  chatMessageSchema,
  chatCompletionRequestSchema,
  chatCompletionSchema,
  chatCompletionChunkSchema,
  responseInputMessageSchema,
  responseCreateRequestSchema,
  responseUsageSchema,
  responseOutputMessageSchema,
  responseObjectSchema,
  responseStreamEventSchema,
  modelSchema,
  modelListSchema,
  jobSchema,
  jobListSchema,
  disputeRequestSchema,
  disputeResultSchema,
  accountSchema,
  eventNameSchema,
  createWebhookBody,
  webhookSchema,
  webhookListSchema,
  webhookDeletedSchema,
];

/**
 * zod's JSON Schema without what the document does not need: the per-schema `$schema`/`$id` header and the `id`
 * metadata (it names the component). Everything else stays, the safe-integer bounds zod puts on every integer
 * included: the validators enforce them (an integer beyond ±2^53−1 is refused), so the document states them too.
 */
function tidy(value: unknown, root = true): unknown {
  if (Array.isArray(value)) return value.map((item) => tidy(item, false));
  if (value === null || typeof value !== "object") return value;
  const out: Schema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (root && (key === "$schema" || key === "$id" || key === "id")) continue;
    // `properties` maps names to schemas: a property called `id` is no metadata.
    out[key] =
      key === "properties" && inner !== null && typeof inner === "object"
        ? Object.fromEntries(Object.entries(inner).map(([name, schema]) => [name, tidy(schema, false)]))
        : tidy(inner, false);
  }
  return out;
}

/** The components of the document, generated from the contract (request bodies as clients write them). */
function componentSchemas(): Record<string, Schema> {
  const generated = z.toJSONSchema(components, {
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas;
  const schemas: Record<string, Schema> = {};
  for (const schema of COMPONENTS) {
    const id = components.get(schema)?.id;
    if (!id || !generated[id]) throw new Error(`contract schema without a component id: ${String(id)}`);
    schemas[id] = tidy(generated[id]) as Schema;
  }
  const unlisted = Object.keys(generated).filter((id) => !(id in schemas));
  if (unlisted.length > 0) throw new Error(`contract components missing from COMPONENTS: ${unlisted.join(", ")}`);
  return schemas;
}

/** One schema outside the components (a header, a parameter), as the server reads or writes it. */
const inline = (schema: z.ZodType): Schema => tidy(z.toJSONSchema(schema, { io: "output" })) as Schema;

const txHash = inline(txHashSchema);
const address = inline(addressSchema);

/** The query parameters of a list endpoint, from its query schema (`parseQuery` reads them as strings). */
function queryParameters(query: z.ZodObject): Schema[] {
  return Object.entries(query.shape).map(([name, field]) => {
    const { description, ...schema } = inline(field as z.ZodType);
    return { name, in: "query", ...(description ? { description } : {}), schema };
  });
}

const serviceHeaders = {
  "x-service-job-id": { description: "Job id of the inference request.", schema: inline(jobIdSchema) },
  "x-service-tx-hash": { description: "Hash of the escrow-lock transaction.", schema: txHash },
  "x-service-settlement-tx": {
    description: "Settlement transaction hash (streams: an HTTP trailer after the last event).",
    schema: txHash,
  },
  "x-service-worker": { description: "On-chain address of the worker.", schema: address },
  "x-service-credits-remaining": { description: "Credit balance after the request.", schema: { type: "string" } },
  "x-request-id": {
    description: "The request id (the client's own when it sent a sane one).",
    schema: { type: "string" },
  },
  [STALE_HEADER]: {
    description:
      "Present when the answer may be older than the chain: whole seconds (rounded up) it may lag behind, because " +
      "the index lags or did not answer and the last known state was served.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
};

/**
 * What any request can be answered with before its operation runs: headers over the size limit, and a query
 * parameter the operation does not take (unknown, repeated, or in an array form such as `status[]`).
 */
const EVERY_REQUEST: ErrorCode[] = ["headers_too_large", "expectation_failed", "invalid_request"];

/** Error responses by status, each listing the codes this API answers with that status. */
function errorResponses(...codes: ErrorCode[]): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...EVERY_REQUEST])) {
    const status = errorCatalog[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Schema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Error: ${list.map((code) => `\`${code}\``).join(", ")}.`,
      content: { "application/json": { schema: ref("Error") } },
    };
  }
  return responses;
}

// Auth itself answers 503 when neither the chain nor the index can confirm a key (docs/DESIGN.md, degraded mode).
const AUTH: ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "key_suspended",
  "rate_limited",
  "internal_error",
  "service_unavailable",
];

const json = (schema: Schema, description: string, headers?: Record<string, unknown>): Schema => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema } },
});

const pick = (...names: (keyof typeof serviceHeaders)[]) =>
  Object.fromEntries(names.map((name) => [name, serviceHeaders[name]]));

const paths: Record<string, Schema> = {
  "/v1/chat/completions": {
    post: {
      operationId: "createChatCompletion",
      summary: "Create a chat completion (credits locked in escrow first, settled on chain after)",
      tags: ["Completions"],
      parameters: [
        {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "Retries with the same key and body replay the first answer (24 h).",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      ],
      requestBody: { required: true, content: { "application/json": { schema: ref("ChatCompletionRequest") } } },
      responses: {
        "200": {
          description:
            "The completion; with `stream: true` a server-sent event stream of `data: <ChatCompletionChunk>` " +
            "events ending with `data: [DONE]`.",
          headers: pick(
            "x-service-job-id",
            "x-service-tx-hash",
            "x-service-settlement-tx",
            "x-service-worker",
            "x-service-credits-remaining",
            "x-request-id",
          ),
          content: {
            "application/json": { schema: ref("ChatCompletion") },
            "text/event-stream": {
              schema: {
                type: "string",
                description: "`data: <ChatCompletionChunk JSON>` events (see the schema), then `data: [DONE]`.",
              },
            },
          },
        },
        ...errorResponses(
          ...AUTH,
          "invalid_request",
          "model_not_found",
          "context_length_exceeded",
          "insufficient_credits",
          "spending_cap_exceeded",
          "idempotency_key_reused",
          "idempotency_key_in_progress",
          "payload_too_large",
          "unsupported_media_type",
          "job_failed",
          "no_workers_available",
          "job_timeout",
        ),
      },
    },
  },
  "/v1/responses": {
    post: {
      operationId: "createResponse",
      summary:
        "Create a response (OpenAI Responses API, stateless and text only; the same escrowed job as a chat completion)",
      tags: ["Completions"],
      parameters: [
        {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "Retries with the same key and body replay the first answer (24 h).",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      ],
      requestBody: { required: true, content: { "application/json": { schema: ref("ResponseCreateRequest") } } },
      responses: {
        "200": {
          description:
            "The response, `usage` carrying the charge; with `stream: true` a server-sent event stream of " +
            "`event: <type>` / `data: <ResponseStreamEvent>` events ending with `response.completed` (no `[DONE]`).",
          headers: pick(
            "x-service-job-id",
            "x-service-tx-hash",
            "x-service-settlement-tx",
            "x-service-worker",
            "x-service-credits-remaining",
            "x-request-id",
          ),
          content: {
            "application/json": { schema: ref("Response") },
            "text/event-stream": {
              schema: {
                type: "string",
                description: "`event: <type>` and `data: <ResponseStreamEvent JSON>` pairs (see the schema).",
              },
            },
          },
        },
        ...errorResponses(
          ...AUTH,
          "invalid_request",
          "model_not_found",
          "context_length_exceeded",
          "insufficient_credits",
          "spending_cap_exceeded",
          "idempotency_key_reused",
          "idempotency_key_in_progress",
          "payload_too_large",
          "unsupported_media_type",
          "job_failed",
          "no_workers_available",
          "job_timeout",
        ),
      },
    },
  },
  "/v1/models": {
    get: {
      operationId: "listModels",
      summary: "List models with at least one active worker",
      tags: ["Models"],
      responses: { "200": json(ref("ModelList"), "The models.", pick(STALE_HEADER)), ...errorResponses(...AUTH) },
    },
  },
  "/v1/models/{model_id}": {
    get: {
      operationId: "getModel",
      summary: "One model",
      tags: ["Models"],
      parameters: [{ name: "model_id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": json(ref("Model"), "The model.", pick(STALE_HEADER)),
        ...errorResponses(...AUTH, "model_not_found"),
      },
    },
  },
  "/v1/jobs": {
    get: {
      operationId: "listJobs",
      summary: "The key's jobs, newest first",
      tags: ["Jobs"],
      parameters: queryParameters(listJobsQuerySchema),
      responses: {
        "200": json(ref("JobList"), "A page of jobs.", pick(STALE_HEADER)),
        ...errorResponses(...AUTH, "invalid_request"),
      },
    },
  },
  "/v1/jobs/{job_id}": {
    get: {
      operationId: "getJob",
      summary: "One job of the key",
      tags: ["Jobs"],
      parameters: [{ name: "job_id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": json(
          ref("Job"),
          "The job.",
          pick(
            "x-service-job-id",
            "x-service-tx-hash",
            "x-service-settlement-tx",
            "x-service-worker",
            "x-service-credits-remaining",
            STALE_HEADER,
          ),
        ),
        ...errorResponses(...AUTH, "job_not_found"),
      },
    },
  },
  "/v1/jobs/{job_id}/dispute": {
    post: {
      operationId: "disputeJob",
      summary: "Compare the received output's hash with the worker's proof; a mismatch opens an on-chain dispute",
      tags: ["Jobs"],
      parameters: [{ name: "job_id", in: "path", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: ref("DisputeRequest") } } },
      responses: {
        "200": json(ref("DisputeResult"), "Dispute opened, or the hashes match.", pick("x-service-job-id")),
        ...errorResponses(
          ...AUTH,
          "invalid_request",
          "payload_too_large",
          "unsupported_media_type",
          "job_not_found",
          "dispute_already_open",
          "dispute_window_expired",
          "job_not_disputable",
        ),
      },
    },
  },
  "/v1/account": {
    get: {
      operationId: "getAccount",
      summary: "The key's wallet and its credits",
      tags: ["Account"],
      responses: {
        "200": json(ref("Account"), "The account.", pick("x-service-credits-remaining", STALE_HEADER)),
        ...errorResponses(...AUTH),
      },
    },
  },
  "/v1/webhooks": {
    post: {
      operationId: "createWebhook",
      summary: `Register a webhook for the key's wallet (at most ${MAX_WEBHOOKS_PER_WALLET} per wallet)`,
      tags: ["Webhooks"],
      requestBody: { required: true, content: { "application/json": { schema: ref("WebhookCreateRequest") } } },
      responses: {
        "201": json(ref("Webhook"), "The webhook (with `secret` only when generated).", {
          location: { description: "`/v1/webhooks/{id}`", schema: { type: "string" } },
        }),
        ...errorResponses(
          ...AUTH,
          "invalid_request",
          "webhook_limit_reached",
          "payload_too_large",
          "unsupported_media_type",
        ),
      },
    },
    get: {
      operationId: "listWebhooks",
      summary: "The wallet's webhooks, newest first, paginated like the jobs",
      description:
        "Each query parameter is given at most once, as a plain value; anything else (a repeated or bracketed " +
        "parameter, an unknown name) is `invalid_request` naming it.",
      tags: ["Webhooks"],
      parameters: queryParameters(listWebhooksQuery),
      responses: {
        "200": json(ref("WebhookList"), "A page of webhooks."),
        ...errorResponses(...AUTH, "invalid_request"),
      },
    },
  },
  "/v1/webhooks/{webhook_id}": {
    delete: {
      operationId: "deleteWebhook",
      summary: "Delete a webhook",
      tags: ["Webhooks"],
      parameters: [{ name: "webhook_id", in: "path", required: true, schema: { type: "string" } }],
      responses: {
        "200": json(ref("WebhookDeleted"), "Deleted."),
        ...errorResponses(...AUTH, "webhook_not_found"),
      },
    },
  },
  "/v1/openapi.json": {
    get: {
      operationId: "getOpenApiDocument",
      summary: "This document",
      tags: ["Meta"],
      security: [],
      responses: {
        "200": json({ type: "object" }, "The OpenAPI 3.1 document."),
        ...errorResponses("rate_limited"),
      },
    },
  },
};

export function openapiDocument(): Schema {
  return {
    openapi: "3.1.0",
    info: {
      title: "Credit-metered inference API",
      version: "2025-01-01",
      summary: "OpenAI-compatible chat completions paid in credits locked and settled on chain.",
      description:
        "Every request locks credits in the escrow contract before routing and settles the worker's signed " +
        "receipt on chain after the last token. Errors share one body (`Error`); every code is listed with the " +
        "status it comes with. On every path: a method the path does not serve is 405 `method_not_allowed` with " +
        "an `Allow` header; an unknown path under `/v<n>/` is 404 `route_not_found`; a query parameter the " +
        "operation does not list, a repeated one or an array form (`status[]=`) is 400 `invalid_request` naming " +
        "it; `null` in an optional body field is the same as leaving it out; a JSON body nested deeper than " +
        `${MAX_JSON_DEPTH} arrays/objects (\`x-max-json-depth\`) is 400 \`invalid_request\`.`,
      "x-max-json-depth": MAX_JSON_DEPTH,
    },
    servers: [{ url: "http://127.0.0.1:8080", description: "Local stack (`npm start`)" }],
    security: [{ bearer: [] }],
    tags: [
      {
        name: "Completions",
        description: "OpenAI-compatible chat completions and Responses, escrowed and settled on chain.",
      },
      { name: "Models", description: "The catalog: models with at least one active worker, with their prices." },
      { name: "Jobs", description: "Every completion is a job: its state, its on-chain facts, disputes." },
      { name: "Account", description: "The key's wallet and its credit balance." },
      { name: "Webhooks", description: "Signed event deliveries (see the README for the event list)." },
      { name: "Meta", description: "This document." },
    ],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer svc_live_<32 alphanumeric>`.",
        },
      },
      schemas: componentSchemas(),
    },
  };
}
