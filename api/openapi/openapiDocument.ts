import { errorCatalog, type ErrorCode } from "../errors/catalog.js";
import { MAX_JSON_DEPTH } from "../http/jsonDepth.js";
import { EVENT_NAMES } from "../webhooks/eventNames.js";
import { MAX_WEBHOOKS_PER_WALLET } from "../webhooks/webhookLimits.js";
import { JOB_STATES } from "../jobs/toJobResource.js";
import { MAX_MODEL_ID_BYTES, MODEL_ID_PATTERN } from "../index/modelDirectory.js";
import { STALE_HEADER } from "../index/staleness.js";

/**
 * The OpenAPI 3.1 document of the `/v1` API. Written here (with the error catalog, job states and event names
 * taken from the code that answers them) and committed as `api/openapi/openapi.json` by `npm run openapi`;
 * `npm run lint:openapi` fails when the two differ or the document does not lint. The gateway serves the
 * committed file at `GET /v1/openapi.json` (no key), and the e2e suite validates real responses against it.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: "null" }] });

const txHash: Schema = { type: "string", pattern: "^0x[0-9a-f]{64}$", description: "Transaction hash." };
const address: Schema = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$", description: "Chain address." };
const isoTime: Schema = { type: "string", format: "date-time", description: "ISO 8601 UTC timestamp." };
const proofHash: Schema = { type: "string", pattern: "^sha256:[0-9a-f]{64}$" };
const jobId: Schema = { type: "string", pattern: "^job_[0-7][0-9A-HJKMNP-TV-Z]{25}$" };
const webhookId: Schema = { type: "string", pattern: "^wh_[0-7][0-9A-HJKMNP-TV-Z]{25}$" };
const tier: Schema = { type: "string", enum: ["lite", "standard", "pro", "max"] };

const usage: Schema = {
  type: "object",
  required: ["prompt_tokens", "completion_tokens", "total_tokens"],
  properties: {
    prompt_tokens: { type: "integer", minimum: 0 },
    completion_tokens: { type: "integer", minimum: 0 },
    total_tokens: { type: "integer", minimum: 0 },
  },
};

/** `usage` of a completion: the token counts plus the charge (api/README.md "The charge in the response"). */
const completionUsage: Schema = {
  allOf: [
    usage,
    {
      type: "object",
      required: ["cost", "service"],
      properties: {
        cost: {
          type: "integer",
          minimum: 0,
          description: "Credits charged for this request (where OpenRouter puts the cost; here in credits).",
        },
        service: {
          type: "object",
          description: "The charge and its transactions.",
          additionalProperties: false,
          required: [
            "job_id",
            "credits_charged",
            "usdg_value",
            "credits_remaining",
            "escrow_tx",
            "settlement_tx",
            "worker_address",
          ],
          properties: {
            job_id: jobId,
            credits_charged: { type: "integer", minimum: 0, description: "Equal to `cost`." },
            usdg_value: { type: "number", minimum: 0, description: "`credits_charged` / 100." },
            credits_remaining: { type: "integer", minimum: 0, description: "The wallet's balance after the charge." },
            escrow_tx: txHash,
            settlement_tx: {
              ...nullable(txHash),
              description:
                "The settlement transaction when it was sent before this object was written (always on a whole " +
                "completion unless the chain is slow; on a stream only when already known, otherwise in the " +
                "`x-service-settlement-tx` trailer and the job resource).",
            },
            worker_address: address,
          },
        },
      },
    },
  ],
};

const schemas: Record<string, Schema> = {
  Error: {
    type: "object",
    required: ["error"],
    additionalProperties: false,
    properties: {
      error: {
        type: "object",
        required: ["code", "message", "type", "param", "docs"],
        additionalProperties: false,
        properties: {
          code: { type: "string", enum: Object.keys(errorCatalog), description: "Machine-readable code." },
          message: { type: "string", minLength: 1 },
          type: {
            type: "string",
            enum: [...new Set(Object.values(errorCatalog).map((entry) => entry.type))],
            description: "Category of the error.",
          },
          param: { type: ["string", "null"], description: "Offending request parameter." },
          docs: { type: "string", format: "uri", description: "`{docs_url}/errors#<code>`." },
          details: { type: "object", description: "Code-specific facts (see the error catalog in the README)." },
        },
      },
    },
  },
  Usage: usage,
  CompletionUsage: completionUsage,
  ChatMessage: {
    type: "object",
    required: ["role", "content"],
    properties: {
      role: { type: "string", enum: ["system", "user", "assistant"] },
      content: { type: "string" },
      name: nullable({ type: "string", maxLength: 256 }),
    },
  },
  ChatCompletionRequest: {
    type: "object",
    required: ["model", "messages"],
    description:
      "OpenAI-compatible. Tools, function calls, logit_bias, audio and other unsupported parameters are refused " +
      "with `invalid_request` naming the parameter.",
    properties: {
      model: { type: "string", minLength: 1 },
      messages: { type: "array", minItems: 1, items: ref("ChatMessage") },
      stream: { ...nullable({ type: "boolean" }), default: false },
      stream_options: nullable({ type: "object", properties: { include_usage: nullable({ type: "boolean" }) } }),
      max_tokens: nullable({ type: "integer", minimum: 1, maximum: 4294967295 }),
      max_completion_tokens: nullable({ type: "integer", minimum: 1, maximum: 4294967295 }),
      temperature: nullable({ type: "number", minimum: 0, maximum: 2 }),
      top_p: nullable({ type: "number", minimum: 0, maximum: 1 }),
      frequency_penalty: nullable({ type: "number", minimum: -2, maximum: 2 }),
      presence_penalty: nullable({ type: "number", minimum: -2, maximum: 2 }),
      stop: nullable({
        oneOf: [
          { type: "string", minLength: 1 },
          { type: "array", maxItems: 4, items: { type: "string", minLength: 1 } },
        ],
      }),
      seed: nullable({ type: "integer" }),
      user: nullable({ type: "string", maxLength: 512 }),
      n: nullable({ const: 1 }),
      logprobs: nullable({ const: false }),
      response_format: nullable({ type: "object", properties: { type: { const: "text" } }, required: ["type"] }),
    },
  },
  ChatCompletion: {
    type: "object",
    required: ["id", "object", "created", "model", "choices", "usage"],
    properties: {
      id: { type: "string", pattern: "^chatcmpl-job_" },
      object: { const: "chat.completion" },
      created: { type: "integer" },
      model: { type: "string" },
      system_fingerprint: { type: "string", description: "The worker's backend kind." },
      choices: {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          required: ["index", "message", "finish_reason"],
          properties: {
            index: { type: "integer" },
            message: {
              type: "object",
              required: ["role", "content"],
              properties: { role: { const: "assistant" }, content: { type: "string" } },
            },
            logprobs: { type: "null" },
            finish_reason: { type: "string", enum: ["stop", "length"] },
          },
        },
      },
      usage: ref("CompletionUsage"),
    },
  },
  ChatCompletionChunk: {
    type: "object",
    description:
      "One `data:` event of a stream. The last content chunk has an empty `delta` and a `finish_reason`; with " +
      "`stream_options.include_usage` a final chunk with no choices carries `usage`. An error after the stream " +
      "started arrives as one `data:` event holding an Error body.",
    required: ["id", "object", "created", "model", "choices"],
    properties: {
      id: { type: "string", pattern: "^chatcmpl-job_" },
      object: { const: "chat.completion.chunk" },
      created: { type: "integer" },
      model: { type: "string" },
      system_fingerprint: { type: "string" },
      choices: {
        type: "array",
        items: {
          type: "object",
          required: ["index", "delta", "finish_reason"],
          properties: {
            index: { type: "integer" },
            delta: {
              type: "object",
              additionalProperties: false,
              properties: { role: { const: "assistant" }, content: { type: "string" } },
            },
            logprobs: { type: "null" },
            finish_reason: { type: ["string", "null"], enum: ["stop", "length", null] },
          },
        },
      },
      usage: ref("CompletionUsage"),
    },
  },
  Model: {
    type: "object",
    required: ["id", "object", "created", "owned_by", "service"],
    properties: {
      id: { type: "string" },
      object: { const: "model" },
      created: { type: "integer", description: "Unix seconds." },
      owned_by: { type: "string" },
      service: {
        type: "object",
        required: [
          "tier",
          "credits_per_request",
          "credits_per_1k_tokens",
          "active_workers",
          "median_latency_ms",
          "parameters",
          "context_window",
          "stats_window_hours",
          "jobs_observed",
          "p95_time_to_first_token_ms",
          "success_rate",
          "disputes_opened",
          "disputes_upheld",
        ],
        properties: {
          tier,
          credits_per_request: { type: "integer", minimum: 0 },
          credits_per_1k_tokens: { type: "integer", minimum: 0 },
          active_workers: { type: "integer", minimum: 1 },
          median_latency_ms: {
            type: "integer",
            minimum: 0,
            description: "p50 time to first token across workers; 0 before any job was served.",
          },
          parameters: { type: "string" },
          context_window: { type: "integer", minimum: 1 },
          stats_window_hours: {
            type: "integer",
            minimum: 1,
            description: "The window the figures below cover: the last this many hours.",
          },
          jobs_observed: {
            type: "integer",
            minimum: 0,
            description: "Jobs of the model that ended in the window (the base of `success_rate`).",
          },
          p95_time_to_first_token_ms: {
            type: ["integer", "null"],
            minimum: 0,
            description: "p95 time from the request to its first token, over the window; null without jobs.",
          },
          success_rate: {
            type: ["number", "null"],
            minimum: 0,
            maximum: 1,
            description: "Share of the window's jobs that produced an answer; null without jobs.",
          },
          disputes_opened: { type: "integer", minimum: 0, description: "Disputes opened in the window." },
          disputes_upheld: {
            type: "integer",
            minimum: 0,
            description: "Of those, upheld by the arbiter (the worker was slashed).",
          },
        },
      },
    },
  },
  ModelList: {
    type: "object",
    required: ["object", "data"],
    properties: { object: { const: "list" }, data: { type: "array", items: ref("Model") } },
  },
  Job: {
    type: "object",
    required: [
      "id",
      "object",
      "status",
      "model",
      "tier",
      "credits_charged",
      "usdg_value",
      "worker_address",
      "created_at",
      "completed_at",
      "usage",
    ],
    properties: {
      id: jobId,
      object: { const: "job" },
      status: { type: "string", enum: [...JOB_STATES] },
      model: { type: "string" },
      tier,
      credits_charged: { type: "integer", minimum: 0 },
      usdg_value: { type: "number", minimum: 0 },
      worker_address: nullable(address),
      created_at: isoTime,
      completed_at: nullable(isoTime),
      on_chain: {
        type: "object",
        description: "Shown once the job settled (and while a settled job is disputed).",
        required: ["escrow_tx", "settlement_tx", "escrow_address", "block_number", "proof_hash"],
        properties: {
          escrow_tx: txHash,
          settlement_tx: txHash,
          escrow_address: address,
          block_number: { type: "integer", minimum: 0 },
          proof_hash: proofHash,
        },
      },
      usage: ref("Usage"),
    },
  },
  JobList: {
    type: "object",
    required: ["object", "data", "has_more", "next_cursor"],
    properties: {
      object: { const: "list" },
      data: { type: "array", items: ref("Job") },
      has_more: { type: "boolean" },
      next_cursor: nullable(jobId),
    },
  },
  DisputeRequest: {
    type: "object",
    required: ["received_output_hash"],
    properties: { received_output_hash: proofHash },
  },
  DisputeResult: {
    type: "object",
    description: "`dispute_opened` false (with a `message`) when the hashes match; nothing happens on chain then.",
    required: ["job_id", "dispute_opened", "your_hash", "worker_hash"],
    properties: {
      job_id: jobId,
      dispute_opened: { type: "boolean" },
      your_hash: proofHash,
      worker_hash: proofHash,
      dispute_tx: txHash,
      arbitration_window_hours: { type: "integer" },
      message: { type: "string" },
    },
  },
  Account: {
    type: "object",
    required: ["wallet", "credits_remaining", "usdg_value", "last_topup_at", "api_key_created_at"],
    properties: {
      wallet: address,
      credits_remaining: { type: "integer", minimum: 0 },
      usdg_value: { type: "number", minimum: 0 },
      last_topup_at: nullable(isoTime),
      api_key_created_at: nullable(isoTime),
    },
  },
  EventName: { type: "string", enum: [...EVENT_NAMES] },
  WebhookCreateRequest: {
    type: "object",
    required: ["url", "events"],
    properties: {
      url: { type: "string", format: "uri", description: "HTTPS endpoint." },
      events: { type: "array", minItems: 1, items: ref("EventName") },
      secret: {
        ...nullable({ type: "string", minLength: 16, maxLength: 256, pattern: "^[\\x21-\\x7e]+$" }),
        description:
          "Signing secret; generated (`whsec_` + base64 of 24 random bytes, shown once in the answer) when absent " +
          "or null. Keys both `Service-Signature` and the Standard Webhooks `webhook-signature` (README).",
      },
    },
  },
  Webhook: {
    type: "object",
    required: ["id", "object", "url", "events", "created_at", "status"],
    properties: {
      id: webhookId,
      object: { const: "webhook" },
      url: { type: "string" },
      events: { type: "array", items: ref("EventName") },
      created_at: isoTime,
      status: { type: "string", enum: ["active", "failed"] },
      secret: { type: "string", description: "Only in the creation answer, and only when the service generated it." },
    },
  },
  WebhookList: {
    type: "object",
    required: ["object", "data", "has_more", "next_cursor"],
    properties: {
      object: { const: "list" },
      data: { type: "array", items: ref("Webhook") },
      has_more: { type: "boolean" },
      next_cursor: nullable(webhookId),
    },
  },
  WebhookDeleted: {
    type: "object",
    required: ["id", "object", "deleted"],
    properties: { id: { type: "string" }, object: { const: "webhook" }, deleted: { const: true } },
  },
};

const serviceHeaders = {
  "x-service-job-id": { description: "Job id of the inference request.", schema: jobId },
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
      parameters: [
        { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
        { name: "before", in: "query", description: "Jobs created before this job id.", schema: jobId },
        { name: "after", in: "query", description: "Jobs created after this job id.", schema: jobId },
        { name: "status", in: "query", schema: { type: "string", enum: [...JOB_STATES] } },
        {
          name: "model",
          in: "query",
          description: "A model id: 1–64 characters without control characters (an id no job has matches none).",
          schema: { type: "string", minLength: 1, maxLength: MAX_MODEL_ID_BYTES, pattern: MODEL_ID_PATTERN },
        },
      ],
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
      parameters: [
        { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
        { name: "before", in: "query", description: "Webhooks created before this webhook id.", schema: webhookId },
        { name: "after", in: "query", description: "Webhooks created after this webhook id.", schema: webhookId },
        { name: "status", in: "query", schema: { type: "string", enum: ["active", "failed"] } },
      ],
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
      { name: "Completions", description: "OpenAI-compatible chat completions, escrowed and settled on chain." },
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
      schemas,
    },
  };
}
