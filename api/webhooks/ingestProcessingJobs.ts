import type pg from "pg";
import { eventIdFor } from "./eventId.js";
import { inTransaction, recordEvents, takeCursor } from "./recordEvent.js";

export const PROCESSING_CURSOR_NAME = "gateway_job_processing";

/** Rows committed late can carry an earlier `processing_at` than rows already seen: look back this far. */
const LOOK_BACK_MS = 5 * 60_000;

/** The cursor of a round that found nothing moves up to the round's time once it is this far behind (one write). */
const IDLE_ADVANCE_MS = 30_000;

/** The jobs of job.processing not recorded yet from `since` (an SQL expression) on. The first EXISTS is evaluated
 *  once (no subscriber of job.processing at all: no job is read). */
function unrecordedFrom(since: string): string {
  return `FROM gateway_job j
       WHERE EXISTS (SELECT 1 FROM webhook w WHERE w.deleted_at IS NULL AND 'job.processing' = ANY (w.events))
         AND j.processing_at IS NOT NULL AND j.processing_at >= ${since}
         AND EXISTS (SELECT 1 FROM webhook w WHERE w.wallet = j.wallet AND w.deleted_at IS NULL
                       AND 'job.processing' = ANY (w.events) AND w.created_at <= j.processing_at)
         AND NOT EXISTS (SELECT 1 FROM webhook_event e WHERE e.source = j.job_id AND e.event = 'job.processing')`;
}

/** Where a round reads from: the cursor's mark minus the look-back (everything while it has none). */
function sinceOf(position: string): Date {
  return position === "" ? new Date(0) : new Date(new Date(position).getTime() - LOOK_BACK_MS);
}

/** `sinceOf` in SQL, on the cursor row as it is committed. */
const COMMITTED_SINCE = `(SELECT CASE WHEN position = '' THEN '-infinity'::timestamptz ELSE position::timestamptz END
         FROM webhook_cursor WHERE name = $1) - make_interval(secs => $2::double precision / 1000)`;

/**
 * Whether a locked round could record an event or move the cursor, read in one statement without a transaction.
 * Most acknowledgements wake a round for a job no webhook receives: that round took the cursor's row lock (a write
 * whose commit waits for a WAL flush) in four statements to find nothing (issue 26). A job committed after this
 * read brings its own wake; a missing cursor row, or a mark due to move up (IDLE_ADVANCE_MS), takes the locked
 * round as before.
 */
async function mayHaveWork(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ position: string | null; now: Date; pending: boolean }>(
    `SELECT (SELECT position FROM webhook_cursor WHERE name = $1) AS position, now() AS now,
            EXISTS (SELECT 1 ${unrecordedFrom(COMMITTED_SINCE)}) AS pending`,
    [PROCESSING_CURSOR_NAME, LOOK_BACK_MS],
  );
  const { position, now, pending } = rows[0]!;
  if (pending || position === null || position === "") return true;
  return now.getTime() - new Date(position).getTime() > IDLE_ADVANCE_MS;
}

/**
 * `job.processing` from the gateway's own `gateway_job` table (api/db/migrations/001_gateway_jobs.sql): every job
 * whose `processing_at` is set, whose wallet has a webhook subscribed to `job.processing` (created no later than
 * the job's `processing_at`), and whose event is not recorded yet. An event no webhook can receive is not stored:
 * it would create no delivery (recordEvent.ts), and without the subscriber test every round re-read the whole
 * look-back window of jobs. The cursor is a low-water mark (latest `processing_at` seen, or the round's time when a
 * round found fewer than a batch, minus a look-back), and the "not recorded yet" test plus the job-derived event id
 * make a re-read harmless. Same single-writer rule as the chain cursor (row lock, SKIP LOCKED). `more`: the round
 * read a whole batch, so more may be waiting.
 */
export async function ingestProcessingJobs(
  pool: pg.Pool,
  batchSize = 500,
): Promise<{ deliveries: number; more: boolean }> {
  if (!(await mayHaveWork(pool))) return { deliveries: 0, more: false };
  return inTransaction(pool, async (client) => {
    const cursor = await takeCursor(client, PROCESSING_CURSOR_NAME);
    if (cursor === undefined) return { deliveries: 0, more: false };
    const { position } = cursor;
    const since = sinceOf(position);
    const { rows } = await client.query<{
      job_id: string;
      wallet: string;
      model: string;
      tier: string;
      worker: string | null;
      processing_at: Date;
    }>(
      `SELECT j.job_id, j.wallet, j.model, j.tier, j.worker, j.processing_at ${unrecordedFrom("$1")}
       ORDER BY j.processing_at, j.job_id LIMIT $2`,
      [since, batchSize],
    );
    const deliveries = await recordEvents(
      client,
      rows.map((job) => ({
        id: eventIdFor(job.job_id, "job.processing"),
        event: "job.processing" as const,
        wallet: job.wallet,
        createdAt: job.processing_at,
        source: job.job_id,
        data: processingData(job.job_id, job.model, job.tier, job.worker, job.processing_at),
      })),
    );
    const latest = rows.at(-1)?.processing_at;
    const current = position === "" ? undefined : new Date(position);
    // A round that read fewer than a batch saw every job up to its own time: the mark may move there (rarely, so
    // an idle round writes nothing).
    const next =
      latest && (!current || latest > current)
        ? latest
        : rows.length < batchSize && (!current || cursor.now.getTime() - current.getTime() > IDLE_ADVANCE_MS)
          ? cursor.now
          : undefined;
    if (next) {
      await client.query("UPDATE webhook_cursor SET position = $2, updated_at = now() WHERE name = $1", [
        PROCESSING_CURSOR_NAME,
        next.toISOString(),
      ]);
    }
    // A full batch may have left jobs behind it: the dispatcher runs the next round at once instead of idling.
    return { deliveries, more: rows.length === batchSize };
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
