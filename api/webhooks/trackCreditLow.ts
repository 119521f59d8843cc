import type pg from "pg";
import type { ChainEventRow } from "./chainEventFeed.js";
import { BALANCE_EVENTS, usdgValue } from "./deriveEvents.js";
import { eventIdFor } from "./eventId.js";
import { DEFAULT_LOW_CREDIT_THRESHOLD } from "@credit-metered/client/http";
import type { NewEvent } from "./recordEvent.js";

/**
 * `credit.low` for the balance-changing chain events of one ingestion batch, inside the ingestion transaction:
 * fires when a wallet's available balance moves from at-or-above its threshold to below it (once per crossing)
 * and re-arms when the balance is back at or above. A wallet never seen before counts as below (it starts at
 * zero), so a first small deposit is not a "fall". The threshold is read when the balance changes: raising it
 * above the current balance fires on the next balance change, not at once.
 *
 * Issue 26: the state is read once per batch (one query for the batch's wallets), followed in memory event by
 * event, and written once per batch, only for wallets that crossed (`credit_low_state` rows change on crossings,
 * not on every job). The ingestion transaction holds the cursor row, so one ingester runs at a time and the state
 * needs no row locks of its own.
 */
export class CreditLowTracker {
  private readonly changed = new Map<string, { below: boolean; balance: number }>();

  private constructor(
    private readonly thresholds: Map<string, number>,
    private readonly below: Map<string, boolean>,
  ) {}

  /** Reads the thresholds and states of the wallets whose balance `rows` change. */
  static async load(client: pg.PoolClient, rows: readonly ChainEventRow[]): Promise<CreditLowTracker> {
    const wallets = [
      ...new Set(rows.flatMap((row) => (balanceOf(row) !== null && row.wallet ? [row.wallet.toLowerCase()] : []))),
    ];
    if (wallets.length === 0) return new CreditLowTracker(new Map(), new Map());
    // One statement for both: a wallet without a settings row has the default threshold (absent from the map).
    const { rows: found } = await client.query<{ wallet: string; threshold: number | null; below: boolean | null }>(
      `SELECT w.wallet, s.low_credit_threshold AS threshold, c.below
       FROM unnest($1::text[]) AS w(wallet)
       LEFT JOIN wallet_settings s ON s.wallet = w.wallet LEFT JOIN credit_low_state c ON c.wallet = w.wallet`,
      [wallets],
    );
    return new CreditLowTracker(
      new Map(found.flatMap((row) => (row.threshold === null ? [] : [[row.wallet, row.threshold] as const]))),
      new Map(found.flatMap((row) => (row.below === null ? [] : [[row.wallet, row.below] as const]))),
    );
  }

  /** The `credit.low` event `row` fires, if any (state followed in memory; `save` writes it). */
  track(row: ChainEventRow): NewEvent | null {
    const balance = balanceOf(row);
    if (balance === null || row.wallet === null) return null;
    const wallet = row.wallet.toLowerCase();
    const threshold = this.thresholds.get(wallet) ?? DEFAULT_LOW_CREDIT_THRESHOLD;
    const wasBelow = this.below.get(wallet) ?? true;
    const isBelow = balance < threshold;
    if (isBelow !== wasBelow) {
      this.below.set(wallet, isBelow);
      this.changed.set(wallet, { below: isBelow, balance });
    }
    if (!isBelow || wasBelow) return null;
    return {
      id: eventIdFor(row.id, "credit.low"),
      event: "credit.low",
      wallet,
      createdAt: new Date(Number(row.timestamp) * 1000),
      source: row.id,
      data: { credits_remaining: balance, usdg_value: usdgValue(balance), threshold },
    };
  }

  /** Writes the wallets that crossed, in one statement. */
  async save(client: pg.PoolClient): Promise<void> {
    if (this.changed.size === 0) return;
    const entries = [...this.changed];
    await client.query(
      `INSERT INTO credit_low_state (wallet, below, balance)
       SELECT * FROM unnest($1::text[], $2::boolean[], $3::bigint[])
       ON CONFLICT (wallet) DO UPDATE SET below = EXCLUDED.below, balance = EXCLUDED.balance, updated_at = now()`,
      [entries.map(([wallet]) => wallet), entries.map(([, state]) => state.below), entries.map(([, s]) => s.balance)],
    );
    this.changed.clear();
  }
}

/** The available balance after a balance-changing event, or null for any other event. */
function balanceOf(row: ChainEventRow): number | null {
  if (!BALANCE_EVENTS.has(row.name) || row.wallet === null) return null;
  const data = (row.data ?? {}) as Record<string, unknown>;
  if (data["balanceAfter"] === undefined) return null;
  return Number(String(data["balanceAfter"]));
}
