import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localAccount } from "@credit-metered/client/local";
import { startRpcCounter } from "../../bench/rpcCounter.js";
import type { RunningIndexer } from "../../scripts/stack/startIndexer.js";
import { sleep } from "../../scripts/stack/waitFor.js";
import { startIndexedStack, type IndexedStack } from "../support/startIndexedStack.js";
import { chainDriver, type ChainDriver } from "./support/chainDriver.js";
import { replaceIndexer } from "./support/ownIndexer.js";

// Issue 26 (the chain's CPU per job): Ponder polls the chain's head every PONDER_POLLING_INTERVAL_MS (100 ms here).
// Unpatched, every poll asked for the latest block with all its transactions, so on a chain with block times nine
// polls in ten downloaded the same block again, with every transaction's calldata, for the node to encode and
// Ponder to parse. Patched (patches/ponder+0.16.10.patch, rpc/index.js), while the head stands still a poll reads it
// without its transactions, and a new head is fetched whole. The indexer here reaches the node through a
// counting pass-through (test double of nothing: it forwards every call unchanged).

/** Port of the counting pass-through (8670-8689 belong to the indexer suite). */
const COUNTER_PORT = 8680;
const IDLE_MS = 3_000;

const wallet = localAccount(15);

let stack: IndexedStack;
let chain: ChainDriver;
let counter: Awaited<ReturnType<typeof startRpcCounter>>;
let indexer: RunningIndexer | undefined;

beforeAll(async () => {
  stack = await startIndexedStack("headpoll");
  chain = chainDriver(stack.chain.rpcUrl, stack.deployment);
  await chain.mintStablecoin(wallet.address, 10_000n);
  counter = await startRpcCounter(stack.chain.rpcUrl, COUNTER_PORT);
  indexer = await replaceIndexer(stack, { rpcUrl: counter.url });
});

afterAll(async () => {
  await indexer?.stop();
  await counter?.stop();
  await stack?.stop();
});

/** Calls of each kind the indexer made while `action` ran. */
async function callsDuring(action: () => Promise<unknown>): Promise<(method: string) => number> {
  const before = new Map(counter.counts);
  await action();
  const after = new Map(counter.counts);
  return (method) => (after.get(method) ?? 0) - (before.get(method) ?? 0);
}

describe("the indexer's head poll (patched Ponder)", () => {
  it("does not download an unchanged head again: idle, every poll reads the head without its transactions", async () => {
    await stack.indexed(await chain.publicClient.getBlockNumber());
    const calls = await callsDuring(() => sleep(IDLE_MS));
    // Unpatched: about 30 (every poll).
    expect(calls("eth_getBlockByNumber:whole") + calls("eth_getBlockByHash:whole")).toBe(0);
    // About one a PONDER_POLLING_INTERVAL_MS: the poll still runs as often.
    expect(calls("eth_getBlockByNumber")).toBeGreaterThanOrEqual(IDLE_MS / 100 / 2);
  });

  it("fetches a new head whole at most twice, however many polls see it, and indexes it", async () => {
    const first = await chain.publicClient.getBlockNumber();
    let last = first;
    const calls = await callsDuring(async () => {
      // Each deposit mines two blocks (approve, deposit); each head then stands for about ten polls.
      for (let i = 0; i < 3; i++) {
        last = (await chain.deposit(wallet, 100n)).blockNumber;
        await sleep(1_000);
      }
      await stack.indexed(last);
    });
    const blocks = Number(last - first);
    const whole = calls("eth_getBlockByNumber:whole") + calls("eth_getBlockByHash:whole");
    // The poll that finds a new head fetches it whole; the next one, the head having moved, asks for the whole latest
    // block at once (as on automine, where the head moves at every poll) and finds it again. Unpatched: every poll.
    expect(whole).toBeGreaterThanOrEqual(1);
    expect(whole).toBeLessThanOrEqual(2 * blocks);
    expect(calls("eth_getBlockByNumber")).toBeGreaterThan(blocks);
  });
});
