import type pg from "pg";
import { DEFAULT_LOW_CREDIT_THRESHOLD } from "@credit-metered/client/http";
import { DELIVERY_CHANNEL, inTransaction } from "./recordEvent.js";

export interface AttemptView {
  attempt_number: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  response_snippet: string | null;
  error: string | null;
  ok: boolean;
}

export interface DeliveryView {
  id: string;
  object: "webhook_delivery";
  webhook_id: string;
  url: string;
  /** failed: its attempts ran out; held: not attempted because the webhook was failed or deleted. */
  status: "failed" | "held" | "pending" | "delivered";
  event: unknown;
  created_at: string;
  failed_at: string | null;
  attempts: AttemptView[];
}

/** `dlv_<n>` ↔ the bigserial id. */
export const deliveryIdText = (id: string | number) => `dlv_${id}`;
export function parseDeliveryId(text: string): string | null {
  const match = /^dlv_([1-9][0-9]{0,17})$/.exec(text);
  return match?.[1] ?? null;
}

/** The wallet's deliveries that did not get through (failed or held), newest first, with every attempt. */
export async function listFailedDeliveries(
  pool: pg.Pool,
  wallet: string,
  options: { webhookId?: string; limit: number },
): Promise<DeliveryView[]> {
  const { rows } = await pool.query<{
    id: string;
    webhook_id: string;
    url: string;
    status: DeliveryView["status"];
    body: string;
    created_at: Date;
    failed_at: Date | null;
    attempts: AttemptView[] | null;
  }>(
    `SELECT d.id, d.webhook_id, w.url, d.status, e.body, d.created_at, d.failed_at,
       (SELECT json_agg(json_build_object(
          'attempt_number', a.attempt_number, 'started_at', a.started_at, 'duration_ms', a.duration_ms,
          'status_code', a.status_code, 'response_snippet', a.response_snippet, 'error', a.error, 'ok', a.ok)
          ORDER BY a.attempt_number)
        FROM webhook_attempt a WHERE a.delivery_id = d.id) AS attempts
     FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id JOIN webhook_event e ON e.id = d.event_id
     WHERE w.wallet = $1 AND w.deleted_at IS NULL AND d.status IN ('failed', 'held')
       AND ($2::text IS NULL OR d.webhook_id = $2)
     ORDER BY d.id DESC LIMIT $3`,
    [wallet.toLowerCase(), options.webhookId ?? null, options.limit],
  );
  return rows.map((row) => ({
    id: deliveryIdText(row.id),
    object: "webhook_delivery",
    webhook_id: row.webhook_id,
    url: row.url,
    status: row.status,
    event: JSON.parse(row.body) as unknown,
    created_at: row.created_at.toISOString(),
    failed_at: row.failed_at?.toISOString() ?? null,
    attempts: (row.attempts ?? []).map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
  }));
}

/**
 * Puts failed/held deliveries of the wallet back in the queue with a fresh series of attempts (same event id
 * and body; attempt numbers keep counting) and RE-ACTIVATES their webhooks: replaying is how the owner says
 * "my endpoint is fixed". Returns the number of deliveries queued.
 */
export async function replayDeliveries(
  pool: pg.Pool,
  wallet: string,
  scope: { deliveryId?: string; webhookId?: string },
): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ webhook_id: string }>(
      `UPDATE webhook_delivery d SET status = 'pending', series_attempts = 0, next_attempt_at = now(),
         failed_at = NULL, lease_owner = NULL, lease_until = NULL
       FROM webhook w
       WHERE w.id = d.webhook_id AND w.wallet = $1 AND w.deleted_at IS NULL AND d.status IN ('failed', 'held')
         AND ($2::bigint IS NULL OR d.id = $2) AND ($3::text IS NULL OR d.webhook_id = $3)
       RETURNING d.webhook_id`,
      [wallet.toLowerCase(), scope.deliveryId ?? null, scope.webhookId ?? null],
    );
    const webhookIds = [...new Set(rows.map((row) => row.webhook_id))];
    if (webhookIds.length > 0) {
      await client.query(
        `UPDATE webhook SET status = 'active', failed_at = NULL WHERE id = ANY ($1) AND status = 'failed'`,
        [webhookIds],
      );
      await client.query(`SELECT pg_notify($1, '')`, [DELIVERY_CHANNEL]);
    }
    return rows.length;
  });
}

export async function getLowCreditThreshold(pool: pg.Pool, wallet: string): Promise<number> {
  const { rows } = await pool.query<{ low_credit_threshold: number }>(
    "SELECT low_credit_threshold FROM wallet_settings WHERE wallet = $1",
    [wallet.toLowerCase()],
  );
  return rows[0]?.low_credit_threshold ?? DEFAULT_LOW_CREDIT_THRESHOLD;
}

export async function setLowCreditThreshold(pool: pg.Pool, wallet: string, threshold: number): Promise<void> {
  await pool.query(
    `INSERT INTO wallet_settings (wallet, low_credit_threshold) VALUES ($1, $2)
     ON CONFLICT (wallet) DO UPDATE SET low_credit_threshold = $2, updated_at = now()`,
    [wallet.toLowerCase(), threshold],
  );
}
