import type pg from "pg";
import type { Address } from "viem";
import { JobStore } from "../../../api/jobs/jobStore.js";

/**
 * A job of `wallet` moved to processing in the gateway's table, as the gateway records a worker's acknowledgement:
 * what job.processing is ingested from. `n` makes its id and key.
 */
export async function insertProcessingJob(
  pool: pg.Pool,
  options: { wallet: Address; worker: Address; model: string; n: number },
): Promise<string> {
  const jobs = new JobStore(pool);
  const jobId = `job_01KPR0CESS1NGT0P1C${String(options.n).padStart(8, "0")}`;
  await jobs.insert({
    jobId,
    jobKey: `0x${options.n.toString(16).padStart(64, "0")}`,
    wallet: options.wallet,
    keyHash: `0x${"ab".repeat(32)}`,
    model: options.model,
    tier: "standard",
    stream: false,
    maxTokens: 100,
    creditsLocked: 8,
    promptTokens: 12,
  });
  await jobs.transition(jobId, ["pending"], "processing", {
    worker: options.worker.toLowerCase(),
    processing_at: new Date(),
  });
  return jobId;
}
