import type pg from "pg";
import { API_VERSION, type EventName } from "@credit-metered/client/http";

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
 * Stores an event once and creates one delivery per subscribed webhook, inside the caller's transaction.
 * Idempotent: an event id seen before creates nothing (so re-ingesting a chain event, or the gateway calling
 * twice for one job, never sends twice). Webhooks that are `failed` get a `held` delivery: not attempted, but
 * listed and replayable. Returns the number of deliveries created.
 */
export async function recordEvent(client: pg.PoolClient, event: NewEvent): Promise<number> {
  const inserted = await client.query(
    `INSERT INTO webhook_event (id, event, wallet, created_at, source, body) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO NOTHING`,
    [event.id, event.event, event.wallet?.toLowerCase() ?? null, event.createdAt, event.source, envelopeBody(event)],
  );
  if (inserted.rowCount !== 1) return 0;
  const deliveries = await client.query(
    `INSERT INTO webhook_delivery (webhook_id, event_id, status, next_attempt_at)
     SELECT w.id, $1, CASE WHEN w.status = 'active' THEN 'pending' ELSE 'held' END,
            CASE WHEN w.status = 'active' THEN now() END
     FROM webhook w
     WHERE w.deleted_at IS NULL AND $2 = ANY (w.events) AND ($3::text IS NULL OR w.wallet = $3)
     ON CONFLICT (webhook_id, event_id) DO NOTHING`,
    [event.id, event.event, event.wallet?.toLowerCase() ?? null],
  );
  if ((deliveries.rowCount ?? 0) > 0) await client.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
  return deliveries.rowCount ?? 0;
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
