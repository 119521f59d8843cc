import { and, eq, sql } from "@ponder/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { localAccount } from "@credit-metered/client/local";
import * as schema from "../../indexer/ponder.schema.js";
import { indexedBlockNumber } from "../../scripts/stack/waitForIndexedBlock.js";
import { chainDriver } from "./support/chainDriver.js";
import { startIndexedStack, type IndexedStack } from "../support/startIndexedStack.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";
import { HttpRequestError, type Hex } from "viem";
import { chainTransport } from "../../indexer/config/chainTransport.js";

// The indexer when the chain node misbehaves. Issue 12, item 1: after the chain node stalled for 15 s or 25 s (SIGSTOP), Ponder 0.16.10 with its own HTTP
// client stayed frozen for good (its rate limiter read the timeouts as rate limiting). With the indexer's
// transport (indexer/config/chainTransport.ts) the index must catch up by itself within seconds of the node
// answering again, while blocks keep coming.

/** The bound the issue asks for ("within seconds"), generous for a shared 2-core machine. */
const CATCH_UP_BOUND_MS = 10_000;
const BLOCK_EVERY_MS = 200;

const lagSchema = z.object({
  chain_head: z.number(),
  indexed_block: z.number(),
  lag_blocks: z.number(),
  lag_seconds: z.number(),
  ready_max_seconds: z.number(),
});

let stack: IndexedStack;
let producing = true;
let producer: Promise<void> | undefined;

async function rpc(method: string, params: unknown[] = [], timeoutMs = 5_000): Promise<unknown> {
  const response = await fetch(stack.chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return ((await response.json()) as { result: unknown }).result;
}

async function chainHead(): Promise<number> {
  return Number.parseInt((await rpc("eth_blockNumber")) as string, 16);
}

beforeAll(async () => {
  stack = await startIndexedStack("stall");
  // A steady trickle of blocks, like a chain under light load; it simply waits while the node is stopped.
  producer = (async () => {
    while (producing) {
      await rpc("evm_mine", [], 60_000).catch(() => undefined);
      await sleep(BLOCK_EVERY_MS);
    }
  })();
});

afterAll(async () => {
  producing = false;
  await producer;
  await stack?.stop();
});

/** Stops the node for `stallMs`, resumes it and returns how long the index took to reach the head seen at resume. */
async function stallAndMeasureCatchUp(stallMs: number): Promise<number> {
  process.kill(-stack.chain.pid, "SIGSTOP");
  try {
    await sleep(stallMs);
  } finally {
    process.kill(-stack.chain.pid, "SIGCONT");
  }
  const resumedAt = Date.now();
  // Blocks keep coming after the resume; the index must reach what the chain had when it came back.
  await sleep(2 * BLOCK_EVERY_MS);
  const target = await chainHead();
  while (Date.now() - resumedAt < 60_000) {
    if ((await indexedBlockNumber(stack.indexerUrl)) >= target) return Date.now() - resumedAt;
    await sleep(100);
  }
  return Number.POSITIVE_INFINITY;
}

describe("the indexer after a chain-node stall", () => {
  it("reports its lag behind the chain head at /lag and is ready while caught up", async () => {
    await stack.indexed(BigInt(await chainHead()));
    const lag = lagSchema.parse(await (await fetch(`${stack.indexerUrl}/lag`)).json());
    expect(lag.chain_head).toBeGreaterThanOrEqual(lag.indexed_block);
    expect(lag.lag_blocks).toBeLessThanOrEqual(5);
    expect(lag.lag_seconds).toBeLessThan(lag.ready_max_seconds);
    const ready = await fetch(`${stack.indexerUrl}/lag/ready`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`${stack.indexerUrl}/lag/metrics`)).text();
    expect(metrics).toMatch(/^indexer_lag_blocks \d+$/m);
    expect(metrics).toMatch(/^indexer_lag_seconds [\d.]+$/m);
  });

  it("catches up within seconds after the node was stopped for 15 s", async () => {
    const catchUpMs = await stallAndMeasureCatchUp(15_000);
    console.log(`index caught up ${catchUpMs} ms after a 15 s stall`);
    expect(catchUpMs).toBeLessThan(CATCH_UP_BOUND_MS);
  }, 120_000);

  it("catches up within seconds after the node was stopped for 25 s", async () => {
    const catchUpMs = await stallAndMeasureCatchUp(25_000);
    console.log(`index caught up ${catchUpMs} ms after a 25 s stall`);
    expect(catchUpMs).toBeLessThan(CATCH_UP_BOUND_MS);
  }, 120_000);

  it("keeps indexing new events after a stall (a deposit made after the resume is readable)", async () => {
    const driver = chainDriver(stack.chain.rpcUrl, stack.deployment);
    const customer = localAccount(12);
    await driver.mintStablecoin(customer.address, 100n);
    const mined = await driver.deposit(customer, 100n);
    await stack.indexed(mined.blockNumber);
    const [row] = await stack.client.db
      .select()
      .from(schema.account)
      .where(
        and(eq(schema.account.wallet, customer.address.toLowerCase() as `0x${string}`), sql`${Date.now()}::bigint > 0`),
      );
    expect(row?.creditsAvailable).toBe(100n);
    const lag = lagSchema.parse(await (await fetch(`${stack.indexerUrl}/lag`)).json());
    expect(lag.lag_seconds).toBeLessThan(lag.ready_max_seconds);
  });
});

/** The index's credits of a wallet (undefined: no row), read past @ponder/client's live-query cache. */
async function indexedCredits(wallet: Hex): Promise<bigint | undefined> {
  const [row] = await stack.client.db
    .select()
    .from(schema.account)
    .where(and(eq(schema.account.wallet, wallet.toLowerCase() as Hex), sql`${Date.now()}::bigint > 0`));
  return row?.creditsAvailable;
}

// A CI run of the chain-fault suite saw the index stand still for minutes after a reorg: Ponder had asked for the
// logs of a block (by hash) that the reorg then removed, and it retries a node's JSON-RPC error nine times over
// ~64 s while live indexing waits. The indexer's transport answers such a request "not found" at once.
describe("the indexer after a reorg", () => {
  it("gives up at once on a block a reorg removed, answering not found (which Ponder does not retry)", async () => {
    const driver = chainDriver(stack.chain.rpcUrl, stack.deployment);
    const snapshot = await rpc("evm_snapshot");
    // A block with a transaction in it, so that no block of the new branch has its hash.
    const orphan = await driver.mintStablecoin(localAccount(15).address, 1n);
    await rpc("evm_revert", [snapshot]);
    await rpc("evm_mine");
    const transport = chainTransport({
      urls: [stack.chain.rpcUrl],
      attemptTimeoutMs: 2_000,
      hedgeAfterMs: 500,
      headTimeoutMs: 1_000,
      stallBudgetMs: 30_000,
    })({});
    const started = Date.now();
    const error: unknown = await transport
      .request({ method: "eth_getLogs", params: [{ blockHash: orphan.blockHash }] })
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(HttpRequestError);
    expect((error as HttpRequestError).status).toBe(404);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("follows a reorg within seconds: a deposit the reorg removed leaves the index, one on the new branch enters", async () => {
    const driver = chainDriver(stack.chain.rpcUrl, stack.deployment);
    const [lost, kept] = [localAccount(13), localAccount(14)];
    for (const account of [lost, kept]) await driver.mintStablecoin(account.address, 300n);
    const snapshot = await rpc("evm_snapshot");
    const mined = await driver.deposit(lost, 100n);
    await stack.indexed(mined.blockNumber);
    expect(await indexedCredits(lost.address)).toBe(100n);
    await rpc("evm_revert", [snapshot]);
    const reorgAt = Date.now();
    await driver.deposit(kept, 200n);
    // The new branch outgrows the old one (the producer keeps mining too).
    await rpc("hardhat_mine", ["0x4"]);
    await waitFor(
      "the index on the new branch",
      async () => (await indexedCredits(lost.address)) === undefined && (await indexedCredits(kept.address)) === 200n,
      { timeoutMs: CATCH_UP_BOUND_MS, intervalMs: 100 },
    );
    console.log(`index followed a reorg in ${Date.now() - reorgAt} ms`);
  });
});
