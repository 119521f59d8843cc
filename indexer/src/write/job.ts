import { job } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type JobRow = typeof job.$inferSelect;
export type NewJob = typeof job.$inferInsert;
export type JobChange = Partial<Omit<JobRow, "jobKey" | "id">>;

/**
 * Inserts a job at `JobOpened`. A plain insert (no lookup first): a job id opens once on chain, and Ponder never
 * projects one log twice (a replay starts from reverted rows).
 */
export async function insertJob(db: Db, values: NewJob): Promise<void> {
  await db.insert(job).values(values);
}

/**
 * Applies `change` and returns the row as it is afterwards, so a handler that needs the opened facts (e.g.
 * `creditsLocked`, which no change touches) reads and writes the job in one store operation, not a find and an
 * update. Throws (Ponder's RecordNotFoundError) if the job was never opened: an indexer bug, not a chain state.
 */
export async function changeJob(db: Db, jobKey: Hex, change: JobChange): Promise<JobRow> {
  return db.update(job, { jobKey }).set(change);
}
