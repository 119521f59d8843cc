import type pg from "pg";
import { inTransaction } from "./recordEvent.js";
import type { AttemptOutcome, Sender } from "./sendDelivery.js";

export interface DeliveryRunOptions {
  /** Delays before attempts 1..5 (ms); attempt k+1 is due `schedule[k]` after attempt k failed. */
  retryScheduleMs: number[];
  /** How long a claimed delivery stays reserved for this dispatcher (must exceed the attempt timeout). */
  leaseMs: number;
  /** This dispatcher's name in `lease_owner`. */
  owner: string;
  batchSize: number;
}

interface Claimed {
  id: string;
  webhook_id: string;
  event_id: string;
  url: string;
  secret: string;
  body: string;
  total_attempts: number;
}

/**
 * Claims due deliveries for this dispatcher. `FOR UPDATE SKIP LOCKED` makes concurrent claims by several
 * dispatchers disjoint, and the lease (`lease_until`) keeps a claimed row away from the others while its
 * attempt is in flight, after the claiming statement committed. A dispatcher that dies mid-attempt loses its
 * lease when it expires; the row is then attempted again (at-least-once: only an attempt that was recorded as
 * acknowledged is never repeated).
 */
export async function claimDueDeliveries(pool: pg.Pool, options: DeliveryRunOptions): Promise<Claimed[]> {
  const { rows } = await pool.query<Claimed>(
    `WITH picked AS (
       SELECT d.id FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= now()
         AND (d.lease_until IS NULL OR d.lease_until < now())
         AND w.status = 'active' AND w.deleted_at IS NULL
       ORDER BY d.next_attempt_at, d.id
       LIMIT $3
       FOR UPDATE OF d SKIP LOCKED
     ), leased AS (
       UPDATE webhook_delivery d SET lease_owner = $1, lease_until = now() + make_interval(secs => $2::double precision / 1000)
       FROM picked WHERE d.id = picked.id
       RETURNING d.id, d.webhook_id, d.event_id, d.total_attempts
     )
     SELECT l.id, l.webhook_id, l.event_id, l.total_attempts, w.url, w.secret, e.body
     FROM leased l JOIN webhook w ON w.id = l.webhook_id JOIN webhook_event e ON e.id = l.event_id`,
    [options.owner, options.leaseMs, options.batchSize],
  );
  return rows;
}

/**
 * Records one attempt and moves the delivery on: delivered; or due again per the schedule; or, after the last
 * attempt of the series, `failed`, which also marks the WEBHOOK failed and holds its other pending deliveries
 * (spec: "marked failed and no more retries occur"). Only the lease holder records; a stale holder's outcome is
 * dropped (the new holder makes its own attempt).
 */
export async function recordAttempt(
  pool: pg.Pool,
  delivery: Claimed,
  outcome: AttemptOutcome,
  startedAt: Date,
  options: DeliveryRunOptions,
): Promise<"delivered" | "retry" | "failed" | "lost_lease"> {
  return inTransaction(pool, async (client) => {
    const current = await client.query<{
      series_attempts: number;
      total_attempts: number;
      webhook_status: string;
      deleted: boolean;
    }>(
      `SELECT d.series_attempts, d.total_attempts, w.status AS webhook_status, w.deleted_at IS NOT NULL AS deleted
       FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id
       WHERE d.id = $1 AND d.lease_owner = $2 AND d.status = 'pending'
       FOR UPDATE OF d`,
      [delivery.id, options.owner],
    );
    const row = current.rows[0];
    if (!row) return "lost_lease";
    const attemptNumber = row.total_attempts + 1;
    await client.query(
      `INSERT INTO webhook_attempt
         (delivery_id, attempt_number, started_at, duration_ms, status_code, response_snippet, error, ok, dispatcher)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        delivery.id,
        attemptNumber,
        startedAt,
        outcome.durationMs,
        outcome.statusCode,
        outcome.responseSnippet,
        outcome.error,
        outcome.ok,
        options.owner,
      ],
    );
    const series = row.series_attempts + 1;
    if (outcome.ok) {
      await client.query(
        `UPDATE webhook_delivery SET status = 'delivered', delivered_at = now(), series_attempts = $2, total_attempts = $3,
           next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $1`,
        [delivery.id, series, attemptNumber],
      );
      return "delivered";
    }
    const maxAttempts = options.retryScheduleMs.length;
    if (series >= maxAttempts) {
      await client.query(
        `UPDATE webhook_delivery SET status = 'failed', failed_at = now(), series_attempts = $2, total_attempts = $3,
           next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $1`,
        [delivery.id, series, attemptNumber],
      );
      await client.query(
        `UPDATE webhook SET status = 'failed', failed_at = now() WHERE id = $1 AND status = 'active'`,
        [delivery.webhook_id],
      );
      await client.query(
        `UPDATE webhook_delivery SET status = 'held', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
         WHERE webhook_id = $1 AND status = 'pending' AND id <> $2`,
        [delivery.webhook_id, delivery.id],
      );
      return "failed";
    }
    // The webhook failed (another delivery exhausted its attempts) or was deleted meanwhile: stop here.
    const stopped = row.webhook_status !== "active" || row.deleted;
    const delay = options.retryScheduleMs[series] ?? 0;
    await client.query(
      `UPDATE webhook_delivery SET status = $4, series_attempts = $2, total_attempts = $3,
         next_attempt_at = CASE WHEN $4 = 'pending' THEN now() + make_interval(secs => $5::double precision / 1000) END,
         lease_owner = NULL, lease_until = NULL WHERE id = $1`,
      [delivery.id, series, attemptNumber, stopped ? "held" : "pending", delay],
    );
    return "retry";
  });
}

/** Claims a batch and attempts each delivery concurrently; resolves when all are recorded. */
export async function runDueDeliveries(pool: pg.Pool, sender: Sender, options: DeliveryRunOptions): Promise<number> {
  const claimed = await claimDueDeliveries(pool, options);
  // allSettled: one failed record (database hiccup) must not leave the others unawaited; its lease expires and
  // the delivery is attempted again.
  const results = await Promise.allSettled(
    claimed.map(async (delivery) => {
      const startedAt = new Date();
      const outcome = await sender.send({
        url: delivery.url,
        secret: delivery.secret,
        body: delivery.body,
        eventId: delivery.event_id,
        attempt: delivery.total_attempts + 1,
      });
      await recordAttempt(pool, delivery, outcome, startedAt, options);
    }),
  );
  const failure = results.find((result) => result.status === "rejected");
  if (failure) throw failure.reason;
  return claimed.length;
}
