import { chainEvent } from "ponder:schema";
import type { Hex } from "viem";
import { chainEventCursor, chainEventId } from "./ids.js";
import { toJsonSafe } from "./jsonSafe.js";
import type { Db, LogPosition } from "./types.js";

export type ChainEventFacts = {
  name: string;
  wallet?: Hex | null;
  jobKey?: Hex | null;
  /** Decoded args plus derived facts; bigints are stored as decimal strings. */
  data: Record<string, unknown>;
};

/**
 * Appends one row to the webhook source log. The id is the log's chain position. A plain insert, not
 * `onConflictDoNothing`: that one first looks the id up (a cache probe or a database read per event), and Ponder
 * never projects one log twice (a restart or a reorg first reverts the rows of the blocks it replays).
 */
export async function recordChainEvent(db: Db, chainId: number, event: LogPosition, facts: ChainEventFacts) {
  await db.insert(chainEvent).values({
    id: chainEventId(chainId, event.block.number, event.log.logIndex),
    cursor: chainEventCursor(event.block.number, event.log.logIndex),
    chainId,
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    txHash: event.transaction.hash,
    timestamp: event.block.timestamp,
    name: facts.name,
    wallet: facts.wallet ?? null,
    jobKey: facts.jobKey ?? null,
    data: toJsonSafe(facts.data),
  });
}
