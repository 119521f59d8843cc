import { z } from "zod";
import { jobIdSchema, pageSchema } from "./common.js";

/**
 * Answers of the web app's `/app` routes that the gateway builds from the index (api/app). Not part of the `/v1`
 * OpenAPI document; declared here so the web app reads the same types the gateway writes.
 */

/** `0x…` as viem types it (`Hex`). */
const hex = z.templateLiteral(["0x", z.string()]);

/** A job of the wallet's history as the web app shows it (all amounts in credits, times ISO). */
export const walletJobSchema = z.object({
  id: z.string(),
  job_key: hex,
  status: z.string(),
  model: z.string(),
  tier: z.string(),
  credits_locked: z.number(),
  credits_charged: z.number().nullable(),
  credits_refunded: z.number().nullable(),
  usdg_value: z.number(),
  worker_address: z.string().nullable(),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  proof_hash: hex.nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
  escrow_tx: hex,
  settlement_tx: hex.nullable(),
  refund_tx: hex.nullable(),
  fail_tx: hex.nullable(),
  dispute_tx: hex.nullable(),
  dispute_outcome: z.string().nullable(),
});
export type WalletJob = z.infer<typeof walletJobSchema>;

/** One page of `GET /app/jobs` (paged and filtered like `GET /v1/jobs`). */
export const walletJobPageSchema = pageSchema(walletJobSchema, jobIdSchema);
export type WalletJobPage = z.infer<typeof walletJobPageSchema>;

const tokenTotals = {
  jobs: z.number(),
  credits_charged: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
};

export const activityDaySchema = z.object({
  /** UTC day, YYYY-MM-DD. */
  date: z.string(),
  ...tokenTotals,
  /** Credits charged per model that day. */
  credits_by_model: z.record(z.string(), z.number()),
});
export type ActivityDay = z.infer<typeof activityDaySchema>;

/** `GET /app/activity`: the wallet's charges, tokens, outcomes and waiting times per UTC day. */
export const walletActivitySchema = z.object({
  object: z.literal("activity"),
  wallet: z.string(),
  days: z.number(),
  from: z.string(),
  to: z.string(),
  totals: z.object(tokenTotals),
  by_day: z.array(activityDaySchema),
  by_model: z.array(z.object({ model: z.string(), ...tokenTotals })),
  /** Jobs per outcome as the chain knows it (`pending` = still running). */
  by_outcome: z.array(z.object({ status: z.string(), jobs: z.number() })),
  /** Per UTC day, over the jobs that relayed a token (the gateway's own records). */
  time_to_first_token: z.array(
    z.object({ date: z.string(), jobs: z.number(), p50_ms: z.number(), p95_ms: z.number() }),
  ),
});
export type WalletActivity = z.infer<typeof walletActivitySchema>;
