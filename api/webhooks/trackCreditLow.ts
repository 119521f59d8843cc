import type pg from "pg";
import type { ChainEventRow } from "./chainEventFeed.js";
import { BALANCE_EVENTS, usdgValue } from "./deriveEvents.js";
import { eventIdFor } from "./eventId.js";
import { DEFAULT_LOW_CREDIT_THRESHOLD } from "@credit-metered/client/http";
import type { NewEvent } from "./recordEvent.js";

/**
 * `credit.low` for a balance-changing chain event, inside the ingestion transaction: fires when the wallet's
 * available balance moves from at-or-above its threshold to below it (once per crossing) and re-arms when the
 * balance is back at or above. A wallet never seen before counts as below (it starts at zero), so a first small
 * deposit is not a "fall". The threshold is read when the balance changes: raising it above the current balance
 * fires on the next balance change, not at once.
 */
export async function trackCreditLow(client: pg.PoolClient, row: ChainEventRow): Promise<NewEvent | null> {
  if (!BALANCE_EVENTS.has(row.name) || row.wallet === null) return null;
  const data = (row.data ?? {}) as Record<string, unknown>;
  if (data["balanceAfter"] === undefined) return null;
  const wallet = row.wallet.toLowerCase();
  const balance = Number(String(data["balanceAfter"]));

  const settings = await client.query<{ low_credit_threshold: number }>(
    "SELECT low_credit_threshold FROM wallet_settings WHERE wallet = $1",
    [wallet],
  );
  const threshold = settings.rows[0]?.low_credit_threshold ?? DEFAULT_LOW_CREDIT_THRESHOLD;
  const previous = await client.query<{ below: boolean }>(
    "SELECT below FROM credit_low_state WHERE wallet = $1 FOR UPDATE",
    [wallet],
  );
  const wasBelow = previous.rows[0]?.below ?? true;
  const isBelow = balance < threshold;
  await client.query(
    `INSERT INTO credit_low_state (wallet, below, balance) VALUES ($1, $2, $3)
     ON CONFLICT (wallet) DO UPDATE SET below = $2, balance = $3, updated_at = now()`,
    [wallet, isBelow, balance],
  );
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
