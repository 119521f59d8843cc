import type pg from "pg";
import { eventIdFor } from "./eventId.js";
import { inTransaction, recordEvent } from "./recordEvent.js";

export const PROCESSING_CURSOR_NAME = "gateway_job_processing";

/** Rows committed late can carry an earlier `processing_at` than rows already seen: look back this far. */
const LOOK_BACK_MS = 5 * 60_000;

/**
 * `job.processing` from the gateway's own `gateway_job` table (api/db/migrations/001_gateway_jobs.sql): every job
 * whose `processing_at` is set and whose event is not recorded yet. The cursor is a low-water mark (latest
 * `processing_at` seen, minus a look-back), and the "not recorded yet" test plus the job-derived event id make
 * a re-read harmless. Same single-writer rule as the chain cursor (row lock, SKIP LOCKED).
 */
export async function ingestProcessingJobs(pool: pg.Pool, batchSize = 500): Promise<number> {
  await pool.query(`INSERT INTO webhook_cursor (name, position) VALUES ($1, '') ON CONFLICT (name) DO NOTHING`, [
    PROCESSING_CURSOR_NAME,
  ]);
  return inTransaction(pool, async (client) => {
    const cursor = await client.query<{ position: string }>(
      "SELECT position FROM webhook_cursor WHERE name = $1 FOR UPDATE SKIP LOCKED",
      [PROCESSING_CURSOR_NAME],
    );
    const position = cursor.rows[0]?.position;
    if (position === undefined) return 0;
    const since = position === "" ? new Date(0) : new Date(new Date(position).getTime() - LOOK_BACK_MS);
    const { rows } = await client.query<{
      job_id: string;
      wallet: string;
      model: string;
      tier: string;
      worker: string | null;
      processing_at: Date;
    }>(
      `SELECT j.job_id, j.wallet, j.model, j.tier, j.worker, j.processing_at FROM gateway_job j
       WHERE j.processing_at IS NOT NULL AND j.processing_at >= $1
         AND NOT EXISTS (SELECT 1 FROM webhook_event e WHERE e.source = j.job_id AND e.event = 'job.processing')
       ORDER BY j.processing_at, j.job_id LIMIT $2`,
      [since, batchSize],
    );
    let deliveries = 0;
    for (const job of rows) {
      deliveries += await recordEvent(client, {
        id: eventIdFor(job.job_id, "job.processing"),
        event: "job.processing",
        wallet: job.wallet,
        createdAt: job.processing_at,
        source: job.job_id,
        data: processingData(job.job_id, job.model, job.tier, job.worker, job.processing_at),
      });
    }
    const latest = rows.at(-1)?.processing_at;
    if (latest && (position === "" || latest > new Date(position))) {
      await client.query("UPDATE webhook_cursor SET position = $2, updated_at = now() WHERE name = $1", [
        PROCESSING_CURSOR_NAME,
        latest.toISOString(),
      ]);
    }
    return deliveries;
  });
}

/** `data` of job.processing (README): the same whether it comes from this poller or enqueueProcessingEvent. */
export function processingData(jobId: string, model: string, tier: string, worker: string | null, startedAt: Date) {
  return {
    job_id: jobId,
    model,
    tier,
    worker_address: worker?.toLowerCase() ?? null,
    started_at: startedAt.toISOString(),
  };
}
