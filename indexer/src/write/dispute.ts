import { dispute } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type DisputeRow = typeof dispute.$inferSelect;
export type DisputeChange = Partial<Omit<DisputeRow, "jobKey" | "jobId">>;

/** Records an opened dispute; a later dispute over the same job (after a rejection) replaces the record. */
export async function upsertDispute(db: Db, values: DisputeRow): Promise<void> {
  const { jobKey: _jobKey, ...change } = values;
  await db.insert(dispute).values(values).onConflictDoUpdate(change);
}

export async function changeDispute(db: Db, jobKey: Hex, change: DisputeChange): Promise<void> {
  await db.update(dispute, { jobKey }).set(change);
}

export async function getDispute(db: Db, jobKey: Hex): Promise<DisputeRow> {
  const row = await db.find(dispute, { jobKey });
  if (!row) throw new Error(`dispute ${jobKey} has no DisputeOpened row`);
  return row;
}
