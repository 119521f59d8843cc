import type pg from "pg";
import type { IndexReader } from "./chainEventFeed.js";
import { ChainEventShapeError, deriveEvents } from "./deriveEvents.js";
import type { NewEvent } from "./recordEvent.js";
import { inTransaction, recordEvents, takeCursor } from "./recordEvent.js";
import { CreditLowTracker } from "./trackCreditLow.js";

export const CURSOR_NAME = "chain_event";

export interface IngestResult {
  /** Chain events read (0 also when another dispatcher holds the cursor). */
  chainEvents: number;
  deliveries: number;
  /**
   * A whole batch was read, so more may be waiting: read again at once. A shorter batch was everything the index
   * had; the next block it commits announces itself (its NOTIFY), so reading again at once would only find nothing
   * and cost a transaction and an index request per block.
   */
  more: boolean;
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
    if (position === undefined) return { chainEvents: 0, deliveries: 0, more: false };
    const batchSize = options.batchSize ?? 500;
    const rows = await index.chainEventsAfter(position, batchSize);
    const creditLow = await CreditLowTracker.load(client, rows);
    // The batch's events in chain order, stored with their deliveries by one statement (recordEvents).
    const events: NewEvent[] = [];
    for (const row of rows) {
      // A malformed row is reported and skipped rather than blocking every later event behind it; a transient
      // failure (the index unreachable) aborts the batch and it is retried.
      try {
        events.push(...(await deriveEvents(row, index)));
      } catch (error) {
        if (!(error instanceof ChainEventShapeError)) throw error;
        options.onMalformed?.(row.id, error);
      }
      const low = creditLow.track(row);
      if (low) events.push(low);
    }
    const answered = await answeredBeforeLock(client, events);
    const deliveries = await recordEvents(
      client,
      events.filter((event) => !answered.has(event.id)),
    );
    await creditLow.save(client);
    const last = rows.at(-1);
    if (last) {
      await client.query("UPDATE webhook_cursor SET position = $2, updated_at = now() WHERE name = $1", [
        CURSOR_NAME,
        last.cursor,
      ]);
    }
    return { chainEvents: rows.length, deliveries, more: rows.length >= batchSize };
  });
}

/**
 * The `job.submitted` events of jobs whose lock was mined only after the gateway had answered its request with an
 * error (issue 25: a lock held up by a fee spike or a dropped transaction). The gateway fails such a lock at once
 * (openEscrow.ts, returnLateLock), and its client never saw a submission, so `job.submitted` is not announced
 * (`job.failed` is: it carries the returned credits). Told by the gateway's own row: closed without a charge, and
 * either marked `closed_before_lock` (by the close of a request whose lock the gateway had not seen mined, or when
 * a close's failJob found no job on chain: jobLifecycle.ts) or closed before the lock's
 * block time. The mark is what decides when the lock lands within a second or so of the close: block times have
 * whole seconds and the chain's clock is not the gateway's. One statement for the whole batch. Returns the ids of
 * the events not to announce.
 */
async function answeredBeforeLock(client: pg.PoolClient, events: readonly NewEvent[]): Promise<Set<string>> {
  const submitted = events.filter((event) => event.event === "job.submitted");
  if (submitted.length === 0) return new Set();
  const { rows } = await client.query<{ id: string }>(
    `SELECT s.id FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS s(id, job_id, locked_at)
     WHERE EXISTS (SELECT 1 FROM gateway_job j
                   WHERE j.job_id = s.job_id AND j.status IN ('failed', 'refunded')
                     AND (j.closed_before_lock OR j.completed_at < s.locked_at))`,
    [
      submitted.map((event) => event.id),
      submitted.map((event) => String(event.data["job_id"])),
      submitted.map((event) => event.createdAt),
    ],
  );
  return new Set(rows.map((row) => row.id));
}
