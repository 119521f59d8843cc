import { JOB_ID_PATTERN } from "@credit-metered/client";
import { z } from "zod";

/**
 * The gateway ↔ worker protocol of docs/DESIGN.md ("Gateway ↔ worker protocol"), declared once for both ends: the
 * worker validates the job and cancel bodies with these schemas and writes its NDJSON events and answers typed by
 * them; the gateway types what it sends by them and validates what it reads with them.
 */

/** `0x` and hex digits, typed as viem's `Hex` so either end passes it to viem as is. */
const hex = z.custom<`0x${string}`>((value) => typeof value === "string" && /^0x[0-9a-fA-F]*$/.test(value), {
  message: "must be 0x-prefixed hex",
});

/** The ways a worker writes a job's tokens (`delivery` of the job body; docs/DESIGN.md "Gateway ↔ worker protocol"). */
export const TOKEN_DELIVERIES = ["stream", "whole"] as const;
export type TokenDelivery = (typeof TOKEN_DELIVERIES)[number];

/** How long a worker delivering a job `whole` holds tokens before it writes them (bounds how stale the gateway's view is). */
export const WHOLE_DELIVERY_HOLD_MS = 250;

/** `POST /v1/jobs` body (gateway → worker). */
export const jobPayloadSchema = z.object({
  job_id: z.string().regex(JOB_ID_PATTERN, "must be job_ followed by a ULID"),
  job_id_bytes32: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed bytes32"),
  model: z.string().min(1),
  messages: z
    .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }))
    .min(1, "must hold at least one message"),
  max_tokens: z.number().int().min(1).max(4_294_967_295),
  // The gateway forwards the client's optional fields; null means "not set", as in the OpenAI API.
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stop: z.array(z.string().min(1)).max(16).nullish(),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  escrow: z.object({
    chain_id: z.number().int().positive(),
    address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed address"),
  }),
  // How the answer's tokens are written: each as it comes (`stream`), or, for an answer the gateway's client reads
  // only once it is whole, the first at once and the rest gathered into `tokens` lines (`whole`): a line and a
  // write per token were the largest part of a worker's CPU per job, and a parse and an event per token the gateway's (issue 26).
  delivery: z.enum(TOKEN_DELIVERIES).optional().default("stream"),
});
/** The job as the gateway sends it. */
export type WorkerJobPayload = z.input<typeof jobPayloadSchema>;
/** The job as the worker runs it (validated). */
export type JobPayload = z.output<typeof jobPayloadSchema>;

/** `POST /v1/jobs/{job_id}/cancel` body (gateway → worker). */
export const cancelPayloadSchema = z.object({
  delivered_tokens: z.number().int().min(0),
});
export type CancelPayload = z.output<typeof cancelPayloadSchema>;

/** The worker's signed receipt, as JSON (`JobReceipt` of the escrow's EIP-712 domain). */
export const receiptSchema = z.object({
  jobId: hex,
  outputHash: hex,
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  finalTokenAt: z.number().int().min(0),
});
export type WorkerReceipt = z.infer<typeof receiptSchema>;

/**
 * One NDJSON line of the `POST /v1/jobs` answer (worker → gateway): ack, tokens (a `token` line each, or gathered
 * `tokens` lines under `delivery: "whole"`), then done or error.
 */
export const workerEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ack"), worker: hex, backend: z.string() }),
  z.object({ type: z.literal("token"), text: z.string() }),
  /** Tokens gathered under `delivery: "whole"`, in order: one token per element. */
  z.object({ type: z.literal("tokens"), texts: z.array(z.string()).min(1) }),
  z.object({
    type: z.literal("done"),
    finish_reason: z.enum(["stop", "length"]),
    usage: z.object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }),
    receipt: receiptSchema,
    signature: hex,
  }),
  z.object({ type: z.literal("error"), code: z.string(), message: z.string().optional().default("") }),
]);
/** An event as the gateway reads it. */
export type WorkerEvent = z.output<typeof workerEventSchema>;
/** An event as the worker writes it. */
export type WorkerEventLine = z.input<typeof workerEventSchema>;

/** `POST /v1/jobs/{job_id}/cancel` answer: the receipt of the delivered prefix and its text. */
export const cancelResponseSchema = z.object({ receipt: receiptSchema, signature: hex, text: z.string() });
export type CancelResponse = z.infer<typeof cancelResponseSchema>;

/** `GET /healthz` of a worker: what the gateway routes on. */
export const healthSchema = z.object({
  status: z.string(),
  address: hex,
  models: z.array(z.string()),
  backend: z.string(),
  inflight: z.number().int().min(0).optional(),
  /** Diagnostics the gateway does not route on. */
  model_backends: z.record(z.string(), z.string()).optional(),
  max_inflight: z.number().int().min(1).optional(),
  fault: z.string().nullish(),
});
export type WorkerHealth = z.infer<typeof healthSchema>;
