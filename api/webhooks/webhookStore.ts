import { randomBytes } from "node:crypto";
import type pg from "pg";
import { ulid } from "ulid";
import type { EventName } from "./eventNames.js";

export type WebhookStatus = "active" | "failed";

/** A webhook as the API shows it (never with its secret). */
export interface WebhookView {
  id: string;
  object: "webhook";
  url: string;
  events: EventName[];
  created_at: string;
  status: WebhookStatus;
}

interface WebhookRow {
  id: string;
  url: string;
  events: EventName[];
  created_at: Date;
  status: WebhookStatus;
}

function toView(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    object: "webhook",
    url: row.url,
    events: row.events,
    created_at: row.created_at.toISOString(),
    status: row.status,
  };
}

/** `whsec_` + 32 base64url characters (192 bits). */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString("base64url")}`;
}

export interface CreateWebhookInput {
  wallet: string;
  url: string;
  events: EventName[];
  secret: string;
}

export async function insertWebhook(pool: pg.Pool, input: CreateWebhookInput): Promise<WebhookView> {
  const { rows } = await pool.query<WebhookRow>(
    `INSERT INTO webhook (id, wallet, url, events, secret) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, url, events, created_at, status`,
    [`wh_${ulid()}`, input.wallet.toLowerCase(), input.url, input.events, input.secret],
  );
  return toView(rows[0] as WebhookRow);
}

export async function listWebhooks(pool: pg.Pool, wallet: string): Promise<WebhookView[]> {
  const { rows } = await pool.query<WebhookRow>(
    `SELECT id, url, events, created_at, status FROM webhook
     WHERE wallet = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
    [wallet.toLowerCase()],
  );
  return rows.map(toView);
}

/**
 * Soft-deletes (deliveries and attempts keep their history); pending deliveries stop. False when the webhook
 * does not exist for this wallet, so another wallet's webhook is indistinguishable from a missing one.
 */
export async function deleteWebhook(pool: pg.Pool, wallet: string, id: string): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rowCount } = await client.query(
      `UPDATE webhook SET deleted_at = now() WHERE id = $1 AND wallet = $2 AND deleted_at IS NULL`,
      [id, wallet.toLowerCase()],
    );
    if (rowCount === 1) {
      await client.query(
        `UPDATE webhook_delivery SET status = 'held', next_attempt_at = NULL WHERE webhook_id = $1 AND status = 'pending'`,
        [id],
      );
    }
    await client.query("COMMIT");
    return rowCount === 1;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}
