import { apiKey } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type ApiKeyRow = typeof apiKey.$inferSelect;
export type ApiKeyChange = Partial<Omit<ApiKeyRow, "keyHash" | "wallet">>;

export async function insertApiKey(db: Db, values: ApiKeyRow): Promise<void> {
  await db.insert(apiKey).values(values).onConflictDoNothing();
}

export async function findApiKey(db: Db, keyHash: Hex): Promise<ApiKeyRow | null> {
  return db.find(apiKey, { keyHash });
}

export async function changeApiKey(db: Db, keyHash: Hex, change: ApiKeyChange): Promise<void> {
  if (!(await db.find(apiKey, { keyHash }))) return;
  await db.update(apiKey, { keyHash }).set(change);
}
