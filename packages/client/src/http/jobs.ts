import { z } from "zod";
import { JOB_STATES } from "../statuses.js";
import {
  addressSchema,
  components,
  isoTimeSchema,
  jobIdSchema,
  pageSchema,
  proofHashSchema,
  tierSchema,
  txHashSchema,
  usageSchema,
} from "./common.js";
import { modelFilterSchema } from "./models.js";
import { pageLimitParam } from "./query.js";

/** The jobs endpoints: the Job resource, its list and query, and the dispute request and answer. */

export const jobStateSchema = z.enum(JOB_STATES, { message: `status must be one of ${JOB_STATES.join(", ")}` });

export const jobSchema = z
  .object({
    id: jobIdSchema,
    object: z.literal("job"),
    status: jobStateSchema,
    model: z.string(),
    tier: tierSchema,
    credits_charged: z.number().int().min(0),
    usdg_value: z.number().min(0),
    worker_address: addressSchema.nullable(),
    created_at: isoTimeSchema,
    completed_at: isoTimeSchema.nullable(),
    on_chain: z
      .object({
        escrow_tx: txHashSchema,
        settlement_tx: txHashSchema,
        escrow_address: addressSchema,
        block_number: z.number().int().min(0),
        proof_hash: proofHashSchema,
      })
      .optional()
      .meta({ description: "Shown once the job settled (and while a settled job is disputed)." }),
    usage: usageSchema,
  })
  .register(components, { id: "Job" });
/** The Job resource (spec, GET /v1/jobs/{job_id}). */
export type JobResource = z.infer<typeof jobSchema>;

export const jobListSchema = pageSchema(jobSchema, jobIdSchema).register(components, { id: "JobList" });
export type JobList = z.infer<typeof jobListSchema>;

/** The query of `GET /v1/jobs`. */
export const listJobsQuerySchema = z.object({
  limit: pageLimitParam(),
  before: jobIdSchema.optional().meta({ description: "Jobs created before this job id." }),
  after: jobIdSchema.optional().meta({ description: "Jobs created after this job id." }),
  status: jobStateSchema.optional(),
  model: modelFilterSchema.optional(),
});

export const disputeRequestSchema = z
  .object({
    received_output_hash: z
      .string({ message: "received_output_hash is required" })
      .regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 lowercase hex>"),
  })
  .register(components, { id: "DisputeRequest" });

export const disputeResultSchema = z
  .object({
    job_id: jobIdSchema,
    dispute_opened: z.boolean(),
    your_hash: proofHashSchema,
    worker_hash: proofHashSchema,
    dispute_tx: txHashSchema.optional(),
    arbitration_window_hours: z.number().int().optional(),
    message: z.string().optional(),
  })
  .meta({
    description: "`dispute_opened` false (with a `message`) when the hashes match; nothing happens on chain then.",
  })
  .register(components, { id: "DisputeResult" });
export type DisputeResult = z.infer<typeof disputeResultSchema>;
