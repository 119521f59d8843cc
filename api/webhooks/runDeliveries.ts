import type pg from "pg";
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

/** This dispatcher's deliveries in flight per endpoint (webhook id), and how many one endpoint may hold. */
export interface EndpointSlots {
  inFlight: ReadonlyMap<string, number>;
  perEndpoint: number;
}

export interface Claimed {
  id: string;
  webhook_id: string;
  event_id: string;
  url: string;
  secret: string;
  body: string;
  /** The number of the attempt this claim is about to make (already counted in the database). */
  attempt_number: number;
}

/** What an attempt row says until its outcome is recorded; it stays so when the dispatcher dies meanwhile. */
export const ATTEMPT_IN_FLIGHT_ERROR = "no outcome recorded: the dispatcher stopped during this attempt";

/**
 * Claims due deliveries for this dispatcher. `FOR UPDATE SKIP LOCKED` makes concurrent claims by several
 * dispatchers disjoint, and the lease (`lease_until`) keeps a claimed row away from the others while its
 * attempt is in flight, after the claiming statement committed. A dispatcher that dies mid-attempt loses its
 * lease when it expires; the row is then attempted again (at-least-once: only an attempt that was recorded as
 * acknowledged is never repeated).
 *
 * The attempt is COUNTED in the same statement, before anything is sent: `total_attempts` moves on and an attempt
 * row (marked in flight) is written, so an attempt whose dispatcher crashed keeps its number and the re-send
 * after the lease expiry carries the next `Service-Delivery-Attempt`, never the same one twice. The five attempts
 * of the spec's series (`series_attempts`) count recorded outcomes only, so a crash does not use one up.
 */
export async function claimDueDeliveries(
  pool: pg.Pool,
  options: DeliveryRunOptions,
  slots: EndpointSlots = { inFlight: new Map(), perEndpoint: Number.MAX_SAFE_INTEGER },
): Promise<Claimed[]> {
  // An endpoint (webhook) already holding its in-flight slots on this dispatcher gets no more; the others' due
  // deliveries are claimed past it, so a slow endpoint's backlog never stands in front of anyone else's.
  const busyIds = [...slots.inFlight.keys()];
  const busyCounts = busyIds.map((id) => slots.inFlight.get(id) ?? 0);
  const { rows } = await pool.query<Claimed>(
    `WITH busy AS (
       SELECT * FROM unnest($5::text[], $6::int[]) AS b(webhook_id, in_flight)
     ), ranked AS (
       SELECT d.id, row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id)
                + coalesce(b.in_flight, 0) AS slot
       FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id LEFT JOIN busy b ON b.webhook_id = d.webhook_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= now()
         AND (d.lease_until IS NULL OR d.lease_until < now())
         AND w.status = 'active' AND w.deleted_at IS NULL
     ), picked AS (
       SELECT d.id FROM webhook_delivery d JOIN ranked r ON r.id = d.id
       WHERE r.slot <= $7 AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until < now())
       ORDER BY d.next_attempt_at, d.id
       LIMIT $3
       FOR UPDATE OF d SKIP LOCKED
     ), leased AS (
       UPDATE webhook_delivery d SET lease_owner = $1,
         lease_until = now() + make_interval(secs => $2::double precision / 1000),
         total_attempts = d.total_attempts + 1
       FROM picked WHERE d.id = picked.id
       RETURNING d.id, d.webhook_id, d.event_id, d.total_attempts
     ), counted AS (
       INSERT INTO webhook_attempt (delivery_id, attempt_number, started_at, duration_ms, ok, error, dispatcher)
       SELECT l.id, l.total_attempts, now(), 0, false, $4, $1 FROM leased l
     )
     SELECT l.id, l.webhook_id, l.event_id, l.total_attempts AS attempt_number, w.url, w.secret, e.body
     FROM leased l JOIN webhook w ON w.id = l.webhook_id JOIN webhook_event e ON e.id = l.event_id`,
    [
      options.owner,
      options.leaseMs,
      options.batchSize,
      ATTEMPT_IN_FLIGHT_ERROR,
      busyIds,
      busyCounts,
      Math.min(slots.perEndpoint, 2_147_483_647),
    ],
  );
  return rows;
}

/**
 * Records one attempt's outcome on its attempt row and moves the delivery on: delivered; or due again per the
 * schedule; or, after the last attempt of the series, `failed`, which also marks the WEBHOOK failed and holds its
 * other pending deliveries (spec: "marked failed and no more retries occur"). Only the lease holder moves the
 * delivery; a stale holder's outcome is still written on its own attempt row (the new holder makes its own
 * attempt under the next number).
 *
 * One statement (issue 26; before: a transaction of five): the delivery's UPDATE re-checks the lease under the
 * row's lock, and the failure-only CTEs act only on the row it moved to `failed`.
 */
export async function recordAttempt(
  pool: pg.Pool,
  delivery: Claimed,
  outcome: AttemptOutcome,
  startedAt: Date,
  options: DeliveryRunOptions,
): Promise<"delivered" | "retry" | "failed" | "lost_lease"> {
  const { rows } = await pool.query<{ status: "delivered" | "pending" | "held" | "failed" }>(
    `WITH attempt AS (
       UPDATE webhook_attempt SET started_at = $3, duration_ms = $4, status_code = $5, response_snippet = $6,
         error = $7, ok = $8
       WHERE delivery_id = $1 AND attempt_number = $2 AND dispatcher = $9
     ), moved AS (
       -- After the last attempt of the series: failed; else pending again, or held when the webhook failed (another
       -- delivery exhausted its attempts) or was deleted meanwhile.
       UPDATE webhook_delivery d SET
         status = CASE WHEN $8 THEN 'delivered' WHEN d.series_attempts + 1 >= $10 THEN 'failed'
                       WHEN w.status = 'active' AND w.deleted_at IS NULL THEN 'pending' ELSE 'held' END,
         series_attempts = d.series_attempts + 1,
         delivered_at = CASE WHEN $8 THEN now() ELSE d.delivered_at END,
         failed_at = CASE WHEN NOT $8 AND d.series_attempts + 1 >= $10 THEN now() ELSE d.failed_at END,
         next_attempt_at = CASE WHEN NOT $8 AND d.series_attempts + 1 < $10 AND w.status = 'active'
                                     AND w.deleted_at IS NULL
                                THEN now() + make_interval(secs => COALESCE(($11::float8[])[d.series_attempts + 2], 0) / 1000)
                           END,
         lease_owner = NULL, lease_until = NULL
       FROM webhook w
       WHERE d.id = $1 AND d.lease_owner = $9 AND d.status = 'pending' AND w.id = d.webhook_id
       RETURNING d.id, d.webhook_id, d.status
     ), failed_webhook AS (
       UPDATE webhook w SET status = 'failed', failed_at = now()
       FROM moved WHERE moved.status = 'failed' AND w.id = moved.webhook_id AND w.status = 'active'
     ), held AS (
       UPDATE webhook_delivery d SET status = 'held', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
       FROM moved
       WHERE moved.status = 'failed' AND d.webhook_id = moved.webhook_id AND d.status = 'pending' AND d.id <> moved.id
     )
     SELECT status FROM moved`,
    [
      delivery.id,
      delivery.attempt_number,
      startedAt,
      outcome.durationMs,
      outcome.statusCode,
      outcome.responseSnippet,
      outcome.error,
      outcome.ok,
      options.owner,
      options.retryScheduleMs.length,
      options.retryScheduleMs,
    ],
  );
  const status = rows[0]?.status;
  if (status === undefined) return "lost_lease";
  if (status === "delivered" || status === "failed") return status;
  return "retry";
}

/** Makes one claimed attempt and records its outcome. */
export async function attemptDelivery(
  pool: pg.Pool,
  sender: Sender,
  delivery: Claimed,
  options: DeliveryRunOptions,
): Promise<void> {
  const startedAt = new Date();
  const outcome = await sender.send({
    url: delivery.url,
    secret: delivery.secret,
    body: delivery.body,
    eventId: delivery.event_id,
    attempt: delivery.attempt_number,
  });
  await recordAttempt(pool, delivery, outcome, startedAt, options);
}
