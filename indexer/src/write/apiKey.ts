import { apiKey } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type ApiKeyRow = typeof apiKey.$inferSelect;
export type ApiKeyChange = Partial<Omit<ApiKeyRow, "keyHash" | "wallet">>;

/**
 * Records a registration. A hash registered before belongs to a wallet that copied it from this registration's
 * pending transaction (ApiKeyRegistry gives it to the earlier commitment, after a KeyRevoked for the copier), so
 * the row moves to the new wallet.
 */
export async function insertApiKey(db: Db, values: ApiKeyRow): Promise<void> {
  await db
    .insert(apiKey)
    .values(values)
    .onConflictDoUpdate({ ...values });
}

export async function findApiKey(db: Db, keyHash: Hex): Promise<ApiKeyRow | null> {
  return db.find(apiKey, { keyHash });
}

export async function changeApiKey(db: Db, keyHash: Hex, change: ApiKeyChange): Promise<void> {
  if (!(await db.find(apiKey, { keyHash }))) return;
  await db.update(apiKey, { keyHash }).set(change);
}
