import { asc, gt, inArray } from "@ponder/client";
import * as schema from "../../indexer/ponder.schema.js";
import { IndexClient } from "../readModel/indexClient.js";

/** One row of the index's append-only `chain_event` log (indexer/ponder.schema.ts). */
export interface ChainEventRow {
  id: string;
  cursor: string;
  chainId: number;
  blockNumber: bigint;
  logIndex: number;
  txHash: string;
  timestamp: bigint;
  name: string;
  wallet: string | null;
  jobKey: string | null;
  data: unknown;
}

/** What the dispatcher reads from the index. */
export interface IndexReader {
  /** Rows with `cursor` after `position`, in chain order. */
  chainEventsAfter(position: string, limit: number): Promise<ChainEventRow[]>;
  /** Model ids of catalog keys (unknown keys are absent). */
  modelIds(modelKeys: string[]): Promise<Map<string, string>>;
}

/** The index at `indexerUrl` (its own client: a dispatcher process, tests). */
export function ponderIndexReader(indexerUrl: string): IndexReader {
  return chainEventFeed(new IndexClient(indexerUrl));
}

/**
 * The dispatcher's reads through an index client (the gateway's own, in process). No deadline: the dispatcher
 * polls on its own schedule and retries a failed round.
 */
export function chainEventFeed(index: Pick<IndexClient, "db">): IndexReader {
  return {
    async chainEventsAfter(position, limit) {
      const rows = await index.db
        .select()
        .from(schema.chainEvent)
        .where(gt(schema.chainEvent.cursor, position))
        .orderBy(asc(schema.chainEvent.cursor))
        .limit(limit);
      return rows as ChainEventRow[];
    },
    async modelIds(modelKeys) {
      if (modelKeys.length === 0) return new Map();
      const keys = modelKeys.map((key) => key.toLowerCase() as `0x${string}`);
      const rows = await index.db
        .select({ modelKey: schema.model.modelKey, modelId: schema.model.modelId })
        .from(schema.model)
        .where(inArray(schema.model.modelKey, keys));
      return new Map(rows.map((row) => [row.modelKey.toLowerCase(), row.modelId]));
    },
  };
}
