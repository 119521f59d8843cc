import { worker, workerModel } from "ponder:schema";
import type { Hex } from "viem";
import { adjustWorkerCount } from "./model.js";
import type { Db } from "./types.js";

export type WorkerRow = typeof worker.$inferSelect;
export type WorkerChange = Partial<Omit<WorkerRow, "address" | "modelKeys">>;

export async function getWorker(db: Db, address: Hex): Promise<WorkerRow> {
  const row = await db.find(worker, { address });
  if (!row) throw new Error(`worker ${address} has no WorkerRegistered row`);
  return row;
}

/** Registers (or re-registers after an exit) a worker with its hosted models. */
export async function registerWorker(
  db: Db,
  values: Omit<WorkerRow, "modelKeys" | "slashCount" | "totalSlashed" | "status" | "unlockAt">,
  modelKeys: readonly Hex[],
): Promise<void> {
  const previous = await db.find(worker, { address: values.address });
  if (previous && previous.status !== "exited") await unhostModels(db, values.address, previous.modelKeys);
  await db
    .insert(worker)
    .values({ ...values, modelKeys: [...modelKeys], status: "active", unlockAt: null, slashCount: 0, totalSlashed: 0n })
    .onConflictDoUpdate({ ...values, modelKeys: [...modelKeys], status: "active", unlockAt: null });
  await hostModels(db, values.address, modelKeys);
}

/** Replaces the worker's hosted models, keeping `worker_model` and `model.workerCount` in step. */
export async function replaceWorkerModels(db: Db, address: Hex, modelKeys: readonly Hex[]): Promise<void> {
  const current = await getWorker(db, address);
  if (current.status !== "exited") await unhostModels(db, address, current.modelKeys);
  await db.update(worker, { address }).set({ modelKeys: [...modelKeys] });
  if (current.status !== "exited") await hostModels(db, address, modelKeys);
}

/** The worker left: it hosts nothing any more (its last model list stays on the row for history). */
export async function exitWorker(db: Db, address: Hex, change: WorkerChange): Promise<void> {
  const current = await getWorker(db, address);
  if (current.status !== "exited") await unhostModels(db, address, current.modelKeys);
  await db.update(worker, { address }).set({ ...change, status: "exited" });
}

export async function changeWorker(
  db: Db,
  address: Hex,
  change: WorkerChange | ((row: WorkerRow) => WorkerChange),
): Promise<void> {
  await db.update(worker, { address }).set(change);
}

async function hostModels(db: Db, address: Hex, modelKeys: readonly Hex[]): Promise<void> {
  for (const modelKey of modelKeys) {
    await db.insert(workerModel).values({ worker: address, modelKey }).onConflictDoNothing();
  }
  await adjustWorkerCount(db, modelKeys, +1);
}

async function unhostModels(db: Db, address: Hex, modelKeys: readonly Hex[]): Promise<void> {
  for (const modelKey of modelKeys) await db.delete(workerModel, { worker: address, modelKey });
  await adjustWorkerCount(db, modelKeys, -1);
}
