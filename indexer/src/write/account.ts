import { account } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type AccountRow = typeof account.$inferSelect;
export type AccountChange = (row: AccountRow) => Partial<Omit<AccountRow, "wallet">>;

function emptyAccount(wallet: Hex): AccountRow {
  return {
    wallet,
    creditsAvailable: 0n,
    creditsLocked: 0n,
    creditsDeposited: 0n,
    creditsWithdrawn: 0n,
    creditsCharged: 0n,
    creditsRestored: 0n,
    lastTopUpAt: null,
    keyHash: null,
    keyStatus: "none",
    keyCreatedAt: null,
    suspended: false,
  };
}

/**
 * Applies `change` to a wallet's row, creating the row first when the wallet is new. The same function
 * computes the insert and the update, so a first event and a later one can never disagree.
 */
export async function changeAccount(db: Db, wallet: Hex, change: AccountChange): Promise<void> {
  const fresh = emptyAccount(wallet);
  await db
    .insert(account)
    .values({ ...fresh, ...change(fresh) })
    .onConflictDoUpdate((row) => change(row));
}
