import type { z } from "zod";
import { addressSchema, jobIdSchema, txHashSchema, type ErrorCode } from "@credit-metered/client/http";
import { STALE_HEADER } from "../readModel/staleness.js";
import { inline, type JsonSchema } from "./jsonSchema.js";

/**
 * How an endpoint describes itself in the OpenAPI document: declared once, on the endpoint (`Endpoint.openapi`,
 * api/endpoints/endpoint.ts), beside the handler that serves it; `openapiDocument.ts` generates the paths from the
 * gateway's endpoint list, so the reference and what the gateway mounts cannot drift. Path parameters come from the
 * Express path, the security and the authentication errors from `Endpoint.access`, the body and query schemas are
 * the zod schemas the handler validates with.
 */
export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tag: OperationTag;
  /** Request headers the operation reads (beyond `Authorization`). */
  requestHeaders?: readonly HeaderParameter[];
  /** The query schema the handler passes to `parseQuery` (each field a parameter). */
  query?: z.ZodObject;
  /** The JSON body schema the handler validates with; must be a contract component (it carries an `id`). */
  requestBody?: z.ZodType;
  response: OperationResponse;
  /** Every error code the operation itself can answer; the authentication errors (`access: "apiKey"`) and
   *  those of any request (`EVERY_REQUEST`, openapiDocument.ts) are added. */
  errors: readonly ErrorCode[];
}

export interface OperationResponse {
  status: 200 | 201;
  description: string;
  /** A contract component (zod schema with an `id`), or a plain JSON Schema. */
  body: z.ZodType | JsonSchema;
  headers?: readonly ResponseHeaderName[];
  /** When the operation can also answer a server-sent event stream: what its events are. */
  eventStream?: string;
}

export interface HeaderParameter {
  name: string;
  description: string;
  schema: JsonSchema;
}

/** The document's tags, in its order. */
export const OPERATION_TAGS = {
  Completions: "OpenAI-compatible chat completions and Responses, escrowed and settled on chain.",
  Models: "The catalog: models with at least one active worker, with their prices.",
  Jobs: "Every completion is a job: its state, its on-chain facts, disputes.",
  Account: "The key's wallet and its credit balance.",
  Webhooks: "Signed event deliveries (see the README for the event list).",
  Meta: "This document.",
} as const;
export type OperationTag = keyof typeof OPERATION_TAGS;

const txHash = inline(txHashSchema);

/** Every response header an operation may declare, described once. */
export const RESPONSE_HEADERS = {
  "x-service-job-id": { description: "Job id of the inference request.", schema: inline(jobIdSchema) },
  "x-service-tx-hash": { description: "Hash of the escrow-lock transaction.", schema: txHash },
  "x-service-settlement-tx": {
    description: "Settlement transaction hash (streams: an HTTP trailer after the last event).",
    schema: txHash,
  },
  "x-service-worker": { description: "On-chain address of the worker.", schema: inline(addressSchema) },
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
  location: { description: "The created resource's path (`/v1/webhooks/{id}`).", schema: { type: "string" } },
} as const satisfies Record<string, { description: string; schema: JsonSchema }>;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** The headers of a job's answer (a completion, `GET /v1/jobs/{job_id}`). */
export const JOB_HEADERS = [
  "x-service-job-id",
  "x-service-tx-hash",
  "x-service-settlement-tx",
  "x-service-worker",
  "x-service-credits-remaining",
] as const satisfies readonly ResponseHeaderName[];

/** `Idempotency-Key`, the request header of both completion endpoints (chat completions, responses). */
export const IDEMPOTENCY_KEY_HEADER = {
  name: "Idempotency-Key",
  description: "Retries with the same key and body replay the first answer (24 h).",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/** What a completion endpoint answers besides success: one job, one pipeline, whatever its wire format. */
export const COMPLETION_ERRORS = [
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
] as const satisfies readonly ErrorCode[];
