import { randomBytes } from "node:crypto";
import type pg from "pg";
import { ulid } from "ulid";
import { ApiError } from "../errors/ApiError.js";
import type { EventName, WebhookList, WebhookStatus, WebhookView } from "@credit-metered/client/http";
import { inTransaction } from "./recordEvent.js";
import { MAX_WEBHOOKS_PER_WALLET } from "./webhookLimits.js";

export type { WebhookStatus, WebhookView } from "@credit-metered/client/http";

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

/** `whsec_` + 32 base64 characters (192 bits): the Standard Webhooks secret format, usable as is by its libraries. */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export interface CreateWebhookInput {
  wallet: string;
  url: string;
  events: EventName[];
  secret: string;
}

/**
 * Creates a webhook unless the wallet already has `MAX_WEBHOOKS_PER_WALLET` (→ `webhook_limit_reached`). A
 * per-wallet advisory lock serialises concurrent creations, so parallel requests cannot pass the cap together.
 */
export async function insertWebhook(pool: pg.Pool, input: CreateWebhookInput): Promise<WebhookView> {
  const wallet = input.wallet.toLowerCase();
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('webhook_wallet:' || $1, 0))", [wallet]);
    const { rows: counted } = await client.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM webhook WHERE wallet = $1 AND deleted_at IS NULL",
      [wallet],
    );
    if ((counted[0]?.count ?? 0) >= MAX_WEBHOOKS_PER_WALLET) {
      throw new ApiError("webhook_limit_reached", {
        message: `This wallet already has ${MAX_WEBHOOKS_PER_WALLET} webhooks, the most it can have. Delete one first.`,
        details: { limit: MAX_WEBHOOKS_PER_WALLET },
      });
    }
    const { rows } = await client.query<WebhookRow>(
      `INSERT INTO webhook (id, wallet, url, events, secret) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, url, events, created_at, status`,
      [`wh_${ulid()}`, wallet, input.url, input.events, input.secret],
    );
    return toView(rows[0] as WebhookRow);
  });
}

/** Every webhook of the wallet (at most `MAX_WEBHOOKS_PER_WALLET`), oldest first: the web application's view. */
export async function listWebhooks(pool: pg.Pool, wallet: string): Promise<WebhookView[]> {
  const { rows } = await pool.query<WebhookRow>(
    `SELECT id, url, events, created_at, status FROM webhook
     WHERE wallet = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
    [wallet.toLowerCase()],
  );
  return rows.map(toView);
}

export interface ListWebhooksQuery {
  limit: number;
  before?: string;
  after?: string;
  status?: WebhookStatus;
}

export type WebhookPage = Omit<WebhookList, "data"> & { data: WebhookView[] };

/**
 * `GET /v1/webhooks`, paginated exactly as `GET /v1/jobs` (api/jobs/listJobs.ts): newest first (ids are
 * time-ordered ULIDs). Without `after` the page walks back from `before` (or now) and `next_cursor` is the
 * `before` of the next, older page; with `after` it holds the webhooks just newer than the cursor (still newest
 * first) and `next_cursor` is the `after` of the next, newer page. `null` when `has_more` is false.
 */
export async function listWebhookPage(pool: pg.Pool, wallet: string, query: ListWebhooksQuery): Promise<WebhookPage> {
  const ascending = query.after !== undefined;
  const { rows } = await pool.query<WebhookRow>(
    `SELECT id, url, events, created_at, status FROM webhook
     WHERE wallet = $1 AND deleted_at IS NULL
       AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR id > $3) AND ($4::text IS NULL OR status = $4)
     ORDER BY id ${ascending ? "ASC" : "DESC"} LIMIT $5`,
    [wallet.toLowerCase(), query.before ?? null, query.after ?? null, query.status ?? null, query.limit + 1],
  );
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit).map(toView);
  const last = page[page.length - 1];
  return {
    object: "list",
    data: ascending ? page.reverse() : page,
    has_more: hasMore,
    next_cursor: hasMore && last ? last.id : null,
  };
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
