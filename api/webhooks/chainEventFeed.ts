import { and, asc, gt, inArray, lte, sql } from "@ponder/client";
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
  /**
   * Rows with `cursor` after `position`, in chain order, that are final: at least `finalityDepth` blocks deep in
   * what the index has processed (docs/DESIGN.md "Finality"). A fact a reorg may still remove is not returned yet.
   */
  chainEventsAfter(position: string, limit: number): Promise<ChainEventRow[]>;
  /** Model ids of catalog keys (unknown keys are absent). */
  modelIds(modelKeys: string[]): Promise<Map<string, string>>;
}

export interface FeedOptions {
  /**
   * Blocks a fact needs (its own and those on top of it, in the index) before it is announced: 1 announces every
   * indexed fact at once (an automine chain, where blocks only come with transactions and nothing reorgs on its own).
   */
  finalityDepth?: number;
}

/** The index at `indexerUrl` (its own client: a dispatcher process, tests). */
export function ponderIndexReader(indexerUrl: string, options: FeedOptions = {}): IndexReader {
  return chainEventFeed(new IndexClient(indexerUrl), options);
}

/**
 * The dispatcher's reads through an index client (the gateway's own, in process). No deadline: the dispatcher
 * polls on its own schedule and retries a failed round.
 */
export function chainEventFeed(index: Pick<IndexClient, "db" | "status">, options: FeedOptions = {}): IndexReader {
  const depth = options.finalityDepth ?? 1;
  let reads = 0;
  return {
    async chainEventsAfter(position, limit) {
      let newest: bigint | undefined;
      if (depth > 1) {
        // The index's own head, not the node's: a fact is final once the index has seen it buried.
        const head = Object.values(await index.status())[0]?.block?.number;
        if (head === undefined) return [];
        newest = BigInt(head) - BigInt(depth - 1);
      }
      // Always true, and a new text each read: the index's /sql caches a result per query text until Ponder's
      // NOTIFY of the next block reaches it, and the dispatcher is woken by that same NOTIFY, so an identical
      // earlier read (the same position, the last one found nothing) could still answer "nothing new" and leave
      // the block's events waiting for the fallback poll (test/webhooks/latency.test.ts, "each indexed block wakes it").
      const fresh = sql`${reads++}::int >= 0`;
      const after = and(gt(schema.chainEvent.cursor, position), fresh);
      const rows = await index.db
        .select()
        .from(schema.chainEvent)
        .where(newest === undefined ? after : and(after, lte(schema.chainEvent.blockNumber, newest)))
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
