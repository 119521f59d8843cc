import { job } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type JobRow = typeof job.$inferSelect;
export type NewJob = typeof job.$inferInsert;
export type JobChange = Partial<Omit<JobRow, "jobKey" | "id">>;

/** Inserts a job at `JobOpened`; a replayed log leaves the row as it is. */
export async function insertJob(db: Db, values: NewJob): Promise<void> {
  await db.insert(job).values(values).onConflictDoNothing();
}

/** The job's row; throws if the chain mentions a job that was never opened (an indexer bug, not a chain state). */
export async function getJob(db: Db, jobKey: Hex): Promise<JobRow> {
  const row = await db.find(job, { jobKey });
  if (!row) throw new Error(`job ${jobKey} has no JobOpened row`);
  return row;
}

export async function changeJob(db: Db, jobKey: Hex, change: JobChange): Promise<void> {
  await db.update(job, { jobKey }).set(change);
}
