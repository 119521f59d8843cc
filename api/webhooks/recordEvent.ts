import type pg from "pg";
import { API_VERSION, type EventName } from "@credit-metered/client/http";
import { pgArray } from "../db/pgArray.js";

/** A fact to announce; `id` comes from eventIdFor(source, event). */
export interface NewEvent {
  id: string;
  event: EventName;
  /** The wallet concerned; null for worker events (sent to every subscriber). */
  wallet: string | null;
  /** When the fact happened (block time for chain facts), so the envelope is the same on every re-derivation. */
  createdAt: Date;
  /** Chain event id or job id the event was derived from (for operators). */
  source: string;
  data: Record<string, unknown>;
}

/** Channel on which new due deliveries are announced to every dispatcher (LISTEN/NOTIFY, fires on commit). */
export const DELIVERY_CHANNEL = "webhook_delivery_due";

/** The exact JSON body of an event's deliveries. */
export function envelopeBody(event: NewEvent): string {
  return JSON.stringify({
    id: event.id,
    event: event.event,
    created_at: event.createdAt.toISOString(),
    api_version: API_VERSION,
    data: event.data,
  });
}

/**
 * Stores an event once and creates one delivery per subscribed webhook, inside the caller's transaction (see
 * recordEvents). Returns the number of deliveries created.
 */
export async function recordEvent(client: pg.PoolClient, event: NewEvent): Promise<number> {
  return recordEvents(client, [event]);
}

/**
 * Stores a batch of events, each once, and creates one delivery per subscribed webhook, in ONE statement inside the
 * caller's transaction (issue 26: before, one statement and round trip per event). Idempotent: an event id seen
 * before creates nothing (so re-ingesting a chain event, or the gateway calling twice for one job, never sends
 * twice). Webhooks that are `failed` get a `held` delivery: not attempted, but listed and replayable. Events and
 * deliveries are inserted in the order given, so delivery ids (the claim's tie-break) follow event order. New
 * deliveries NOTIFY the dispatchers from the same statement (delivered on commit). Returns the number of
 * deliveries created.
 */
export async function recordEvents(client: pg.PoolClient, events: readonly NewEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  // `stored` holds only the ids not seen before; an event's deliveries come from it, so a repeat creates none.
  const { rows } = await client.query<{ deliveries: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[])
         WITH ORDINALITY AS i(id, event, wallet, created_at, source, body, ord)
     ), stored AS (
       INSERT INTO webhook_event (id, event, wallet, created_at, source, body)
       SELECT id, event, wallet, created_at, source, body FROM input ORDER BY ord
       ON CONFLICT (id) DO NOTHING RETURNING id
     ), delivered AS (
       INSERT INTO webhook_delivery (webhook_id, event_id, status, next_attempt_at)
       SELECT w.id, i.id, CASE WHEN w.status = 'active' THEN 'pending' ELSE 'held' END,
              CASE WHEN w.status = 'active' THEN now() END
       FROM input i JOIN stored s ON s.id = i.id
       JOIN webhook w ON w.deleted_at IS NULL AND i.event = ANY (w.events) AND (i.wallet IS NULL OR w.wallet = i.wallet)
       ORDER BY i.ord, w.created_at, w.id
       ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING 1
     ), counted AS (
       SELECT count(*) AS deliveries FROM delivered
     )
     SELECT deliveries::text AS deliveries, CASE WHEN deliveries > 0 THEN pg_notify($7, '') END AS notified
     FROM counted`,
    [
      pgArray(events.map((event) => event.id)),
      pgArray(events.map((event) => event.event)),
      pgArray(events.map((event) => event.wallet?.toLowerCase() ?? null)),
      pgArray(events.map((event) => event.createdAt.toISOString())),
      pgArray(events.map((event) => event.source)),
      pgArray(events.map(envelopeBody)),
      DELIVERY_CHANNEL,
    ],
  );
  return Number(rows[0]?.deliveries ?? 0);
}

/** Runs `work` in a transaction on a pooled client. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Takes the named ingestion cursor for this transaction (`FOR UPDATE SKIP LOCKED`: of several dispatchers one
 * ingests at a time), creating it on first use; undefined while another dispatcher holds it. Creating it here, only
 * when the row is missing, spares every round an insert statement of its own; and a round that finds the row held
 * by another dispatcher (which several gateways' dispatchers do all the time) learns it from the same statement,
 * without trying the insert. `now` is the transaction's time.
 */
export async function takeCursor(
  client: pg.PoolClient,
  name: string,
): Promise<{ position: string; now: Date } | undefined> {
  const taken = await client.query<{ position: string | null; now: Date; present: boolean }>(
    `WITH taken AS (SELECT position FROM webhook_cursor WHERE name = $1 FOR UPDATE SKIP LOCKED)
     SELECT (SELECT position FROM taken) AS position, now() AS now,
            EXISTS (SELECT 1 FROM webhook_cursor WHERE name = $1) AS present`,
    [name],
  );
  const row = taken.rows[0]!;
  if (row.position !== null) return { position: row.position, now: row.now };
  if (row.present) return undefined;
  // Missing: created here; an insert racing another dispatcher's (which then holds the row) returns nothing.
  const created = await client.query<{ position: string; now: Date }>(
    `INSERT INTO webhook_cursor (name, position) VALUES ($1, '') ON CONFLICT (name) DO NOTHING
     RETURNING position, now() AS now`,
    [name],
  );
  return created.rows[0];
}
