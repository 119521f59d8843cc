import { Hono } from "hono";
import { publicClients } from "ponder:api";
import { z } from "zod";
import { readIndexerEnv } from "../../config/readIndexerEnv.js";

// Index lag = chain head − last indexed block, in blocks and in seconds (how long the oldest block the index
// is missing has existed). Ponder's own /metrics cannot be extended from here, so the lag has its own routes:
// `/lag` (JSON), `/lag/metrics` (Prometheus text) and `/lag/ready` (503 past INDEX_LAG_READY_MAX_SECONDS).

const env = readIndexerEnv();
/** Every chain read here gives up after this long: a probe must never hang on a stalled node. */
const CHAIN_READ_TIMEOUT_MS = 2_000;

const statusSchema = z.record(
  z.string(),
  z.object({ block: z.object({ number: z.number(), timestamp: z.number() }).nullable() }),
);

export type IndexLag = {
  chain_head: number;
  indexed_block: number;
  lag_blocks: number;
  lag_seconds: number;
};

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${CHAIN_READ_TIMEOUT_MS} ms`)),
      CHAIN_READ_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function measure(selfUrl: string): Promise<IndexLag> {
  const client = publicClients.app;
  const [head, status] = await Promise.all([
    withTimeout(client.getBlockNumber({ cacheTime: 0 }), "chain head"),
    withTimeout(
      fetch(new URL("/status", selfUrl)).then(async (response) => statusSchema.parse(await response.json())),
      "indexer status",
    ),
  ]);
  const indexed = Math.min(...Object.values(status).map((chain) => chain.block?.number ?? -1));
  const lagBlocks = Math.max(0, Number(head) - indexed);
  let lagSeconds = 0;
  if (lagBlocks > 0) {
    const oldestMissing = await withTimeout(
      client.getBlock({ blockNumber: BigInt(indexed + 1) }),
      "oldest unindexed block",
    );
    lagSeconds = Math.max(0, Date.now() / 1000 - Number(oldestMissing.timestamp));
  }
  return { chain_head: Number(head), indexed_block: indexed, lag_blocks: lagBlocks, lag_seconds: lagSeconds };
}

export const lagRoutes = new Hono();

lagRoutes.get("/lag", async (c) => {
  try {
    return c.json({ ...(await measure(c.req.url)), ready_max_seconds: env.INDEX_LAG_READY_MAX_SECONDS });
  } catch (error) {
    return c.json({ error: (error as Error).message }, 503);
  }
});

lagRoutes.get("/lag/ready", async (c) => {
  try {
    const lag = await measure(c.req.url);
    const ready = lag.lag_seconds <= env.INDEX_LAG_READY_MAX_SECONDS;
    return c.json({ ready, ...lag, ready_max_seconds: env.INDEX_LAG_READY_MAX_SECONDS }, ready ? 200 : 503);
  } catch (error) {
    return c.json({ ready: false, error: (error as Error).message }, 503);
  }
});

lagRoutes.get("/lag/metrics", async (c) => {
  const lines = [
    "# HELP indexer_lag_up 1 when the chain head and the indexed block could both be read.",
    "# TYPE indexer_lag_up gauge",
  ];
  try {
    const lag = await measure(c.req.url);
    lines.push(
      "indexer_lag_up 1",
      "# HELP indexer_chain_head_block Latest block of the chain node.",
      "# TYPE indexer_chain_head_block gauge",
      `indexer_chain_head_block ${lag.chain_head}`,
      "# HELP indexer_indexed_block Last block fully indexed.",
      "# TYPE indexer_indexed_block gauge",
      `indexer_indexed_block ${lag.indexed_block}`,
      "# HELP indexer_lag_blocks Chain head minus the last indexed block.",
      "# TYPE indexer_lag_blocks gauge",
      `indexer_lag_blocks ${lag.lag_blocks}`,
      "# HELP indexer_lag_seconds Age of the oldest block not indexed yet (0 when caught up).",
      "# TYPE indexer_lag_seconds gauge",
      `indexer_lag_seconds ${lag.lag_seconds.toFixed(3)}`,
    );
  } catch {
    lines.push("indexer_lag_up 0");
  }
  return c.text(`${lines.join("\n")}\n`, 200, { "content-type": "text/plain; version=0.0.4" });
});
