import { model } from "ponder:schema";
import type { Hex } from "viem";
import type { Db } from "./types.js";

export type ModelRow = typeof model.$inferSelect;
export type ModelListing = Omit<ModelRow, "workerCount" | "retired" | "retiredAt">;
export type ModelChange = Partial<Omit<ModelRow, "modelKey" | "workerCount">>;

/** Lists a model; `workerCount` starts at zero and is only moved by `adjustWorkerCount`. */
export async function insertModel(db: Db, listing: ModelListing): Promise<void> {
  await db
    .insert(model)
    .values({ ...listing, retired: false, retiredAt: null, workerCount: 0 })
    .onConflictDoNothing();
}

export async function changeModel(db: Db, modelKey: Hex, change: ModelChange): Promise<void> {
  await db.update(model, { modelKey }).set(change);
}

export async function findModel(db: Db, modelKey: Hex): Promise<ModelRow | null> {
  return db.find(model, { modelKey });
}

/**
 * Model ids already read, by key. Safe to keep across blocks, reorgs and restarts: a key is keccak256 of its id, so
 * the pair never changes whatever the chain does; only ids found are kept.
 */
const knownModelIds = new Map<Hex, string>();

/** The model id of `modelKey` (the key itself for a model the catalog never listed): read once per key. */
export async function modelIdOf(db: Db, modelKey: Hex): Promise<string> {
  const known = knownModelIds.get(modelKey);
  if (known !== undefined) return known;
  const row = await findModel(db, modelKey);
  if (!row) return modelKey;
  knownModelIds.set(modelKey, row.modelId);
  return row.modelId;
}

/** Moves the number of (not exited) workers hosting each model by `delta`. */
export async function adjustWorkerCount(db: Db, modelKeys: readonly Hex[], delta: number): Promise<void> {
  for (const modelKey of modelKeys) {
    if (!(await db.find(model, { modelKey }))) continue;
    await db.update(model, { modelKey }).set((row) => ({ workerCount: Math.max(0, row.workerCount + delta) }));
  }
}
