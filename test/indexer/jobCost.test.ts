import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  jobIdToBytes32,
  keyCommitmentOf,
  keyHashOf,
  modelKeyOf,
  newJobId,
  outputHashOf,
} from "@credit-metered/client";
import { localAccount } from "@credit-metered/client/local";
import type { RunningIndexer } from "../../scripts/stack/startIndexer.js";
import { startIndexedStack, type IndexedStack } from "../support/startIndexedStack.js";
import { chainDriver, type ChainDriver } from "./support/chainDriver.js";
import { ponderCounters, processGroupCpuMs, replaceIndexer } from "./support/ownIndexer.js";

// Issue 26, "the indexer's cost per job": what the per-job handlers (JobOpened, then JobSettled, JobFailed or
// JobRefunded) ask of Ponder's store, counted by Ponder itself (`/metrics`), per job, in batches as the gateway
// sends them. Store operations are the handlers' find/insert/update calls; every one that is not answered from
// Ponder's in-memory cache is a database read ("miss"), and every row they write is flushed to Postgres (and its
// reorg table) at the end of the block.

const MODEL = modelKeyOf("llama-3.1-8b-instruct");
const BATCH = 10;
const ROUNDS = 3;
/**
 * Budgets per job (open + close), from the handlers in indexer/src (indexer/README.md "Cost per job"); before
 * issue 26: 8 store operations and 3.1-4.2 database reads per job.
 * - Store operations: JobOpened inserts the job and its chain_event row and upserts the account; the closing
 *   event updates the job (reading it in the same call), upserts the account and inserts its chain_event row.
 * - Database reads: none once Ponder has learned which rows each handler reads, which costs the first two events of
 *   a handler (it samples one event in ten, from the second) and a read of the wallet's account: 3 in a measure of
 *   BATCH * ROUNDS jobs. Before patches/ponder+0.16.10.patch let it learn from live events too (it learned only
 *   while backfilling), the closing event read its job on every job: 1.0-1.1 reads per job.
 */
const STORE_OPS_PER_JOB = 6;
const DB_READS_PER_JOB = 3 / (BATCH * ROUNDS);

const workerAccount = localAccount(4);
const customer = localAccount(12);
const keyHash = keyHashOf("svc_live_cost");

let stack: IndexedStack;
let chain: ChainDriver;
let indexer: RunningIndexer;

type Cost = {
  storeOps: number;
  byMethod: Record<string, number>;
  cacheMisses: number;
  missesByTable: Record<string, number>;
  cpuMs: number;
};

async function snapshot(): Promise<{ counters: Map<string, number>; cpuMs: number }> {
  const counters = await ponderCounters(stack.indexerUrl, [
    "ponder_indexing_store_queries_total",
    "ponder_indexing_cache_requests_total",
  ]);
  return { counters, cpuMs: processGroupCpuMs(indexer.pid) };
}

function costPerJob(
  before: Awaited<ReturnType<typeof snapshot>>,
  after: Awaited<ReturnType<typeof snapshot>>,
  jobs: number,
): Cost {
  const byMethod: Record<string, number> = {};
  let storeOps = 0;
  let cacheMisses = 0;
  const missesByTable: Record<string, number> = {};
  for (const [key, value] of after.counters) {
    const delta = value - (before.counters.get(key) ?? 0);
    if (delta === 0) continue;
    if (key.startsWith("ponder_indexing_store_queries_total")) {
      storeOps += delta;
      const table = /table="([^"]+)"/.exec(key)?.[1];
      const method = /method="([^"]+)"/.exec(key)?.[1];
      byMethod[`${table}.${method}`] = (byMethod[`${table}.${method}`] ?? 0) + delta / jobs;
    } else if (key.includes('type="miss"')) {
      cacheMisses += delta;
      const table = /table="([^"]+)"/.exec(key)?.[1] ?? "?";
      missesByTable[table] = (missesByTable[table] ?? 0) + delta / jobs;
    }
  }
  return {
    storeOps: storeOps / jobs,
    byMethod,
    cacheMisses: cacheMisses / jobs,
    missesByTable,
    cpuMs: (after.cpuMs - before.cpuMs) / jobs,
  };
}

async function openBatch(): Promise<Hex[]> {
  const jobKeys = Array.from({ length: BATCH }, () => jobIdToBytes32(newJobId()));
  const acceptedAt = (await chain.publicClient.getBlock()).timestamp;
  const requests = jobKeys.map((jobId) => ({ jobId, keyHash, modelKey: MODEL, maxTokens: 1000, acceptedAt }));
  const receipt = await chain.send(
    chain.roles.gateway,
    stack.deployment.contracts.creditEscrow,
    creditEscrowAbi,
    "openJobBatch",
    [requests],
  );
  await stack.indexed(receipt.blockNumber);
  return jobKeys;
}

/** Settles the jobs in one settleBatch; returns its block. */
async function settleAll(jobKeys: Hex[]): Promise<bigint> {
  const signed = await Promise.all(
    jobKeys.map((jobKey) => chain.signedReceipt(workerAccount, jobKey, outputHashOf(jobKey), 100)),
  );
  const receipt = await chain.send(
    chain.roles.gateway,
    stack.deployment.contracts.creditEscrow,
    creditEscrowAbi,
    "settleBatch",
    [signed.map((s) => s.receipt), signed.map((s) => s.signature)],
  );
  return receipt.blockNumber;
}

/** Runs `close` on ROUNDS batches of freshly opened jobs and returns the indexer's cost per job. */
async function measure(close: (jobKeys: Hex[]) => Promise<bigint>): Promise<Cost> {
  const before = await snapshot();
  for (let round = 0; round < ROUNDS; round++) {
    const jobKeys = await openBatch();
    await stack.indexed(await close(jobKeys));
  }
  return costPerJob(before, await snapshot(), ROUNDS * BATCH);
}

beforeAll(async () => {
  stack = await startIndexedStack("cost");
  indexer = await replaceIndexer(stack);
  chain = chainDriver(stack.chain.rpcUrl, stack.deployment);
  await chain.mintStablecoin(customer.address, 10_000n);
  await chain.mintStake(workerAccount.address, 2_000n);
  await chain.registerWorker(workerAccount, "http://worker:1", [MODEL], 1_000n);
  await chain.deposit(customer, 10_000n);
  const registry = stack.deployment.contracts.apiKeyRegistry;
  await chain.send(customer, registry, apiKeyRegistryAbi, "commitKey", [keyCommitmentOf(customer.address, keyHash)]);
  await chain.send(customer, registry, apiKeyRegistryAbi, "registerKey", [keyHash]);
  // Warm-up, not measured: what the indexer reads once per process (a model's id) is not a per-job cost.
  await stack.indexed(await settleAll(await openBatch()));
});

afterAll(async () => {
  await indexer?.stop();
  await stack?.stop();
});

function report(label: string, cost: Cost) {
  console.log(
    `${label}: ${cost.storeOps.toFixed(2)} store ops/job (${JSON.stringify(cost.byMethod)}), ` +
      `${cost.cacheMisses.toFixed(2)} cache misses/job (${JSON.stringify(cost.missesByTable)}), ${cost.cpuMs.toFixed(2)} indexer CPU ms/job`,
  );
}

describe("the indexer's cost per job", () => {
  it("a settled job (JobOpened + JobSettled) costs at most 6 store operations and reads nothing from the database once learned", async () => {
    const cost = await measure(settleAll);
    report("settled", cost);
    expect(cost.storeOps).toBeLessThanOrEqual(STORE_OPS_PER_JOB);
    expect(cost.cacheMisses).toBeLessThan(DB_READS_PER_JOB + 0.01);
  });

  it("a failed job (JobOpened + JobFailed) costs at most 6 store operations and reads nothing from the database once learned", async () => {
    const cost = await measure(async (jobKeys) => {
      let last = 0n;
      for (const jobKey of jobKeys) {
        const receipt = await chain.send(
          chain.roles.gateway,
          stack.deployment.contracts.creditEscrow,
          creditEscrowAbi,
          "failJob",
          [jobKey],
        );
        last = receipt.blockNumber;
      }
      return last;
    });
    report("failed", cost);
    expect(cost.storeOps).toBeLessThanOrEqual(STORE_OPS_PER_JOB);
    expect(cost.cacheMisses).toBeLessThan(DB_READS_PER_JOB + 0.01);
  });

  it("a refunded job (JobOpened + JobRefunded) costs at most 6 store operations and reads nothing from the database once learned", async () => {
    const cost = await measure(async (jobKeys) => {
      // Anyone may refund once the job timeout and the settle grace after it are over.
      await chain.travel(stack.deployment.params.jobTimeout + 301);
      let last = 0n;
      for (const jobKey of jobKeys) {
        const receipt = await chain.send(customer, stack.deployment.contracts.creditEscrow, creditEscrowAbi, "refund", [
          jobKey,
        ]);
        last = receipt.blockNumber;
      }
      return last;
    });
    report("refunded", cost);
    expect(cost.storeOps).toBeLessThanOrEqual(STORE_OPS_PER_JOB);
    expect(cost.cacheMisses).toBeLessThan(DB_READS_PER_JOB + 0.01);
  });
});
