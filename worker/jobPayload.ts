import { z } from "zod";

/** `POST /v1/jobs` body, as fixed in docs/DESIGN.md "Gateway ↔ worker protocol". */
export const jobPayloadSchema = z.object({
  job_id: z.string().regex(/^job_[0-7][0-9A-HJKMNP-TV-Z]{25}$/, "must be job_ followed by a ULID"),
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
});

export type JobPayload = z.output<typeof jobPayloadSchema>;

/** `POST /v1/jobs/{job_id}/cancel` body. */
export const cancelPayloadSchema = z.object({
  delivered_tokens: z.number().int().min(0),
});

export type CancelPayload = z.output<typeof cancelPayloadSchema>;
