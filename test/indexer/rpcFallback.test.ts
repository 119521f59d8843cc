import { and, eq, sql } from "@ponder/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import { localAccount } from "@credit-metered/client/local";
import * as schema from "../../indexer/ponder.schema.js";
import type { RunningIndexer } from "../../scripts/stack/startIndexer.js";
import { sleep } from "../../scripts/stack/waitFor.js";
import { INDEXER_TEST_PORTS, startIndexedStack, type IndexedStack } from "../support/startIndexedStack.js";
import { chainDriver, type ChainDriver } from "./support/chainDriver.js";
import { replaceIndexer } from "./support/ownIndexer.js";
import { startTcpProxy, type TcpProxy } from "./support/tcpProxy.js";

// Issue 25, "several RPC endpoints": the indexer is given two JSON-RPC URLs (PONDER_RPC_URL, then
// PONDER_RPC_FALLBACK_URLS); the first is a proxy to the chain node, the second the node itself. When the first
// endpoint hangs or dies, indexing goes on through the second: every event mined meanwhile is indexed within a few
// seconds and the indexer never reports itself not ready.

/** Port of the first endpoint's proxy (8670-8689 belong to the indexer suite). */
const PROXY_PORT = 8673;
/** A mined event must be readable within this long of being mined, outage or not (attempt timeout 2 s + margin). */
const INDEXED_WITHIN_MS = 8_000;
const DEPOSITS_DURING_OUTAGE = 5;

const wallet = localAccount(14);

let stack: IndexedStack;
let chain: ChainDriver;
let proxy: TcpProxy | undefined;
let indexer: RunningIndexer | undefined;
let schemaCount = 0;
let readCount = 0;

beforeAll(async () => {
  stack = await startIndexedStack("fallback");
  chain = chainDriver(stack.chain.rpcUrl, stack.deployment);
  await chain.mintStablecoin(wallet.address, 10_000n);
});

afterAll(async () => {
  await indexer?.stop();
  await proxy?.kill();
  await stack?.stop();
});

/** A fresh indexer (own schema, from block 0) whose first endpoint is a new proxy and whose second is the node. */
async function indexerBehindProxy(): Promise<void> {
  await indexer?.stop();
  await proxy?.kill();
  proxy = await startTcpProxy(PROXY_PORT, { host: "127.0.0.1", port: INDEXER_TEST_PORTS.chain });
  indexer = await replaceIndexer(stack, {
    rpcUrl: proxy.url,
    fallbackUrls: [stack.chain.rpcUrl],
    databaseSchema: `indexer_fallback_${++schemaCount}`,
  });
}

async function availableCredits(): Promise<bigint | undefined> {
  const [row] = await stack.client.db
    .select()
    .from(schema.account)
    .where(and(eq(schema.account.wallet, wallet.address.toLowerCase() as Hex), sql`${readCount++}::int >= 0`));
  return row?.creditsAvailable;
}

/** Deposits 1 credit at a time and returns, per deposit, how long after its block was mined it was readable. */
async function depositsIndexedAfterMs(count: number): Promise<number[]> {
  const delays: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = (await availableCredits()) ?? 0n;
    const receipt = await chain.deposit(wallet, 100n);
    const minedAt = Date.now();
    while ((await availableCredits()) !== before + 100n && Date.now() - minedAt < 30_000) await sleep(50);
    await stack.indexed(receipt.blockNumber);
    delays.push(Date.now() - minedAt);
  }
  return delays;
}

/** Watches `/lag/ready` until stopped; returns the statuses that were not 200. */
function watchReadiness(): { stop: () => Promise<number[]> } {
  const failures: number[] = [];
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const status = await fetch(`${stack.indexerUrl}/lag/ready`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.status)
        .catch(() => 0);
      if (status !== 200) failures.push(status);
      await sleep(200);
    }
  })();
  return {
    stop: async () => {
      watching = false;
      await loop;
      return failures;
    },
  };
}

describe("the indexer with two RPC endpoints", () => {
  it("indexes through the first endpoint while it answers", async () => {
    await indexerBehindProxy();
    const connectionsBefore = proxy!.connections();
    const [delay] = await depositsIndexedAfterMs(1);
    expect(proxy!.connections()).toBeGreaterThan(0);
    expect(connectionsBefore).toBeGreaterThan(0);
    expect(delay).toBeLessThan(INDEXED_WITHIN_MS);
  });

  it("keeps indexing every event through the second endpoint when the first stops answering", async () => {
    const readiness = watchReadiness();
    proxy!.blackhole();
    const delays = await depositsIndexedAfterMs(DEPOSITS_DURING_OUTAGE);
    const notReady = await readiness.stop();
    console.log(`first endpoint hung: deposits indexed after ${delays.join(", ")} ms`);
    expect(delays).toHaveLength(DEPOSITS_DURING_OUTAGE);
    expect(Math.max(...delays)).toBeLessThan(INDEXED_WITHIN_MS);
    expect(notReady).toEqual([]);
  }, 120_000);

  it("keeps indexing every event through the second endpoint when the first goes away", async () => {
    await indexerBehindProxy();
    await depositsIndexedAfterMs(1);
    const readiness = watchReadiness();
    await proxy!.kill();
    const delays = await depositsIndexedAfterMs(DEPOSITS_DURING_OUTAGE);
    const notReady = await readiness.stop();
    console.log(`first endpoint down: deposits indexed after ${delays.join(", ")} ms`);
    expect(Math.max(...delays)).toBeLessThan(INDEXED_WITHIN_MS);
    expect(notReady).toEqual([]);
  }, 120_000);
});
