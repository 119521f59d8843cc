import { workerBond, workerBondChange } from "ponder:schema";
import type { Hex } from "viem";
import { chainEventCursor, chainEventId } from "./ids.js";
import type { Db, LogPosition } from "./types.js";

export type BondRow = typeof workerBond.$inferSelect;
export type BondChangeKind = "posted" | "withdrawn" | "seized" | "payout_forfeited";

export type BondMovement = {
  worker: Hex;
  kind: BondChangeKind;
  amount: bigint;
  /** The bond after the event; `undefined` when the event does not move it (a forfeiture of deferred pay). */
  bondAfter?: bigint;
  payer?: Hex;
  jobKey?: Hex;
  reserveAfter?: bigint;
};

function emptyBond(worker: Hex): BondRow {
  return {
    worker,
    bond: 0n,
    totalPosted: 0n,
    totalWithdrawn: 0n,
    totalSeized: 0n,
    totalPayoutForfeited: 0n,
    seizureCount: 0,
    updatedAt: 0n,
  };
}

const TOTAL_OF: Record<BondChangeKind, "totalPosted" | "totalWithdrawn" | "totalSeized" | "totalPayoutForfeited"> = {
  posted: "totalPosted",
  withdrawn: "totalWithdrawn",
  seized: "totalSeized",
  payout_forfeited: "totalPayoutForfeited",
};

/**
 * Projects one bond event: the worker's row (created at its first event; the bond copied from `bondAfter`, never
 * recomputed) and one history row keyed by the log's chain position.
 */
export async function projectBondMovement(db: Db, chainId: number, event: LogPosition, m: BondMovement) {
  const total = TOTAL_OF[m.kind];
  const change = (row: BondRow): Partial<BondRow> => ({
    bond: m.bondAfter ?? row.bond,
    [total]: row[total] + m.amount,
    seizureCount: row.seizureCount + (m.kind === "seized" ? 1 : 0),
    updatedAt: event.block.timestamp,
  });
  const fresh = emptyBond(m.worker);
  const row = await db
    .insert(workerBond)
    .values({ ...fresh, ...change(fresh) })
    .onConflictDoUpdate(change);
  // The id is the log's position: Ponder never projects one log twice (a replay starts from reverted rows).
  await db.insert(workerBondChange).values({
    id: chainEventId(chainId, event.block.number, event.log.logIndex),
    cursor: chainEventCursor(event.block.number, event.log.logIndex),
    worker: m.worker,
    kind: m.kind,
    amount: m.amount,
    bondAfter: row.bond,
    payer: m.payer ?? null,
    jobKey: m.jobKey ?? null,
    reserveAfter: m.reserveAfter ?? null,
    txHash: event.transaction.hash,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
  });
}
