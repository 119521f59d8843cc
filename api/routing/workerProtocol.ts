import { z } from "zod";

/** The gateway ↔ worker protocol of docs/DESIGN.md, validated at the boundary. */

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);

export const receiptSchema = z.object({
  jobId: hex,
  outputHash: hex,
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  finalTokenAt: z.number().int().min(0),
});
export type WorkerReceipt = z.infer<typeof receiptSchema>;

export const workerEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ack"), worker: hex, backend: z.string() }),
  z.object({ type: z.literal("token"), text: z.string() }),
  z.object({
    type: z.literal("done"),
    finish_reason: z.enum(["stop", "length"]),
    usage: z.object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }),
    receipt: receiptSchema,
    signature: hex,
  }),
  z.object({ type: z.literal("error"), code: z.string(), message: z.string().optional().default("") }),
]);
export type WorkerEvent = z.infer<typeof workerEventSchema>;

export const cancelResponseSchema = z.object({ receipt: receiptSchema, signature: hex, text: z.string() });
export type CancelResponse = z.infer<typeof cancelResponseSchema>;

export const healthSchema = z.object({
  status: z.string(),
  address: hex,
  models: z.array(z.string()),
  backend: z.string(),
  inflight: z.number().int().min(0).optional(),
});
export type WorkerHealth = z.infer<typeof healthSchema>;

export interface WorkerJobPayload {
  job_id: string;
  job_id_bytes32: string;
  model: string;
  messages: { role: string; content: string }[];
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  escrow: { chain_id: number; address: string };
}
