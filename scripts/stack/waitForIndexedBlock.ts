import { z } from "zod";
import { waitFor } from "./waitFor.js";

// Ponder's GET /status: `{ <chainName>: { id, block: { number, timestamp } } }` (block null before the first one).
const statusSchema = z.record(
  z.string(),
  z.object({ id: z.number(), block: z.object({ number: z.number(), timestamp: z.number() }).nullable() }),
);

/** The highest block the indexer has fully processed (on its only chain), or -1 before any. */
export async function indexedBlockNumber(indexerUrl: string): Promise<number> {
  const response = await fetch(`${indexerUrl}/status`);
  if (!response.ok) return -1;
  const status = statusSchema.parse(await response.json());
  return Math.min(...Object.values(status).map((chain) => chain.block?.number ?? -1));
}

/** Resolves once every event of `blockNumber` (and before) is readable through the indexer. */
export async function waitForIndexedBlock(
  indexerUrl: string,
  blockNumber: bigint | number,
  { timeoutMs = 30_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const target = Number(blockNumber);
  await waitFor(`indexer at block ${target}`, async () => (await indexedBlockNumber(indexerUrl)) >= target, {
    timeoutMs,
    intervalMs,
  });
}
