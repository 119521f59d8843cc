import type pg from "pg";
import { eventIdFor } from "./eventId.js";
import { processingData } from "./ingestProcessingJobs.js";
import { inTransaction, recordEvent } from "./recordEvent.js";

/** What the gateway knows when a worker acknowledges a job (state `processing`). */
export interface ProcessingJob {
  /** `job_<ULID>`. */
  jobId: string;
  wallet: string;
  model: string;
  tier: string;
  workerAddress: string;
  /** When the worker acknowledged. */
  startedAt: Date;
}

/**
 * Announces `job.processing` (the one event the chain does not see) at once. Optional: the dispatcher also polls
 * `gateway_job.processing_at` (ingestProcessingJobs.ts); calling this when the worker's ack arrives only saves
 * the poll interval; the event id derives from the job id, so calling it twice (a retry, a second replica) sends once.
 * Pass the gateway's own transaction client to make it atomic with its state change, or the pool.
 */
export async function enqueueProcessingEvent(db: pg.Pool | pg.PoolClient, job: ProcessingJob): Promise<number> {
  const event = {
    id: eventIdFor(job.jobId, "job.processing"),
    event: "job.processing" as const,
    wallet: job.wallet.toLowerCase(),
    createdAt: job.startedAt,
    source: job.jobId,
    data: processingData(job.jobId, job.model, job.tier, job.workerAddress, job.startedAt),
  };
  if ("release" in db) return recordEvent(db, event);
  return inTransaction(db, (client) => recordEvent(client, event));
}
