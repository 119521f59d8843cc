import type pg from "pg";
import type { IndexReader } from "./chainEventFeed.js";
import { ChainEventShapeError, deriveEvents } from "./deriveEvents.js";
import type { NewEvent } from "./recordEvent.js";
import { inTransaction, recordEvent, takeCursor } from "./recordEvent.js";
import { CreditLowTracker } from "./trackCreditLow.js";

export const CURSOR_NAME = "chain_event";

export interface IngestResult {
  /** Chain events read (0 also when another dispatcher holds the cursor). */
  chainEvents: number;
  deliveries: number;
}

/**
 * Reads the index's chain events after the durable cursor, records the webhook events they announce and their
 * deliveries, and moves the cursor, all in ONE transaction: a crash before COMMIT leaves nothing, after it leaves
 * everything, so a restart neither loses nor re-announces a fact. The cursor row is taken with
 * `FOR UPDATE SKIP LOCKED`, so of several dispatchers exactly one ingests at a time and the others skip the round.
 */
export async function ingestChainEvents(
  pool: pg.Pool,
  index: IndexReader,
  options: { batchSize?: number; onMalformed?: (rowId: string, error: Error) => void } = {},
): Promise<IngestResult> {
  return inTransaction(pool, async (client) => {
    const position = (await takeCursor(client, CURSOR_NAME))?.position;
    if (position === undefined) return { chainEvents: 0, deliveries: 0 };
    const rows = await index.chainEventsAfter(position, options.batchSize ?? 500);
    let deliveries = 0;
    const creditLow = await CreditLowTracker.load(client, rows);
    for (const row of rows) {
      // A malformed row is reported and skipped rather than blocking every later event behind it; a transient
      // failure (the index unreachable) aborts the batch and it is retried.
      let derived: NewEvent[] = [];
      try {
        derived = await deriveEvents(row, index);
      } catch (error) {
        if (!(error instanceof ChainEventShapeError)) throw error;
        options.onMalformed?.(row.id, error);
      }
      if (row.name === "JobOpened" && (await answeredBeforeLock(client, derived))) {
        derived = derived.filter((event) => event.event !== "job.submitted");
      }
      for (const event of derived) deliveries += await recordEvent(client, event);
      const low = creditLow.track(row);
      if (low) deliveries += await recordEvent(client, low);
    }
    await creditLow.save(client);
    const last = rows.at(-1);
    if (last) {
      await client.query("UPDATE webhook_cursor SET position = $2, updated_at = now() WHERE name = $1", [
        CURSOR_NAME,
        last.cursor,
      ]);
    }
    return { chainEvents: rows.length, deliveries };
  });
}

/**
 * Whether a job's lock was mined only after the gateway had answered its request with an error (issue 25: a lock
 * held up by a fee spike or a dropped transaction). The gateway fails such a lock at once (openEscrow.ts,
 * returnLateLock), and its client never saw a submission, so `job.submitted` is not announced (`job.failed` is: it
 * carries the returned credits). Told by the gateway's own row: closed without a charge before the lock's block.
 */
async function answeredBeforeLock(client: pg.PoolClient, derived: readonly NewEvent[]): Promise<boolean> {
  const submitted = derived.find((event) => event.event === "job.submitted");
  if (!submitted) return false;
  const { rows } = await client.query(
    `SELECT 1 FROM gateway_job
      WHERE job_id = $1 AND status IN ('failed', 'refunded') AND completed_at < $2`,
    [submitted.data.job_id, submitted.createdAt],
  );
  return rows.length > 0;
}
