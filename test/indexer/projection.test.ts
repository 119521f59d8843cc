import { and, asc, eq, sql } from "@ponder/client";
import { decodeEventLog, type Hex, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  workerRegistryAbi,
  bytes32ToJobId,
  jobIdToBytes32,
  newJobId,
  keyCommitmentOf,
  keyHashOf,
  modelKeyOf,
  outputHashOf,
} from "@credit-metered/client";
import { localAccount } from "@credit-metered/client/local";
import { EVENT_LOOP_SAMPLE_MS } from "../../shared/metrics/eventLoopSampling.js";
import * as schema from "../../indexer/ponder.schema.js";
import { chainDriver, type ChainDriver } from "./support/chainDriver.js";
import { ponderCounters } from "./support/ownIndexer.js";
import { INDEXER_TEST_PORTS, startIndexedStack, type IndexedStack } from "../support/startIndexedStack.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import pg from "pg";

// One chain history, driven step by step through every contract function that emits an event; after each
// step the indexed rows are read back through @ponder/client, as the gateway reads them.

const MODEL_8B = "llama-3.1-8b-instruct"; // standard: 8 credits per request, 4 per 1k tokens
const MODEL_70B = "llama-3.3-70b-instruct";
const KEY_8B = modelKeyOf(MODEL_8B);
const KEY_70B = modelKeyOf(MODEL_70B);
const SVC = 10n ** 18n;
const ESCROW_1000_TOKENS = 10n; // 8 + ceil((1000 - 500) * 4 / 1000)
const CHARGE_100_TOKENS = 8n;
/** The bond chainDriver.registerWorker posts for each worker (from the admin), stablecoin units. */
const WORKER_BOND = 1_000_000n * 10n ** 6n;
const SPONSORED_BOND = 3n * 10n ** 6n;
const WITHDRAWN_BOND = 2n * 10n ** 6n;

const workerA = localAccount(4);
const workerB = localAccount(5);
const customer = localAccount(12);
const sponsor = localAccount(13);
/** ModelCatalog.CHANGE_DELAY (ProtocolTime.CONFIG_CHANGE_DELAY). */
const CHANGE_DELAY_SECONDS = 2 * 24 * 60 * 60;
const lower = (value: string) => value.toLowerCase() as Hex;

let stack: IndexedStack;
let chain: ChainDriver;
/** Every receipt of the run, in order: the chain_event log must match their logs exactly. */
const receipts: TransactionReceipt[] = [];

async function step(receipt: Promise<TransactionReceipt>): Promise<TransactionReceipt> {
  const mined = await receipt;
  receipts.push(mined);
  await stack.indexed(mined.blockNumber);
  return mined;
}

let readCount = 0;
/**
 * A condition that is always true but makes each query's text unique. The SQL endpoint caches results per
 * query text and drops them when Postgres notifies it of the next indexed block, a moment after `/status`
 * already shows that block; a unique query always reads the database, so "indexed" means "readable".
 */
function fresh() {
  const n = readCount++;
  return sql`${n}::int >= 0`;
}

async function accountOf(wallet: Hex) {
  const [row] = await stack.client.db
    .select()
    .from(schema.account)
    .where(and(eq(schema.account.wallet, lower(wallet)), fresh()));
  if (!row) throw new Error(`no account row for ${wallet}`);
  return row;
}

async function jobOf(jobKey: Hex) {
  const [row] = await stack.client.db
    .select()
    .from(schema.job)
    .where(and(eq(schema.job.jobKey, jobKey), fresh()));
  if (!row) throw new Error(`no job row for ${jobKey}`);
  return row;
}

async function eventsOfTx(txHash: Hex) {
  return stack.client.db
    .select()
    .from(schema.chainEvent)
    .where(and(eq(schema.chainEvent.txHash, txHash), fresh()))
    .orderBy(asc(schema.chainEvent.cursor));
}

async function workerCountOf(modelKey: Hex) {
  const [row] = await stack.client.db
    .select()
    .from(schema.model)
    .where(and(eq(schema.model.modelKey, modelKey), fresh()));
  return row?.workerCount;
}

async function bondOf(worker: Hex) {
  const [row] = await stack.client.db
    .select()
    .from(schema.workerBond)
    .where(and(eq(schema.workerBond.worker, lower(worker)), fresh()));
  return row;
}

async function bondChangesOf(worker: Hex) {
  return stack.client.db
    .select()
    .from(schema.workerBondChange)
    .where(and(eq(schema.workerBondChange.worker, lower(worker)), fresh()))
    .orderBy(asc(schema.workerBondChange.cursor));
}

/** Opens a job for the customer's current key on the 8B model with max_tokens 1000. */
async function openJob(keyHash: Hex) {
  const id = newJobId();
  const jobKey = jobIdToBytes32(id);
  const receipt = await step(chain.openJob(jobKey, keyHash, KEY_8B, 1000));
  return { id, jobKey, receipt };
}

async function settledJob(keyHash: Hex, output: string) {
  const opened = await openJob(keyHash);
  const signed = await chain.signedReceipt(workerA, opened.jobKey, outputHashOf(output), 100);
  const receipt = await step(
    chain.send(chain.roles.gateway, stack.deployment.contracts.creditEscrow, creditEscrowAbi, "settle", [
      signed.receipt,
      signed.signature,
    ]),
  );
  const settlement = chain.settlementOf(customer.address, workerA.address, signed.receipt, CHARGE_100_TOKENS);
  return { ...opened, settlement, settleReceipt: receipt };
}

/**
 * Ponder's counts of the `job` table's cache reads (`/metrics`): answered from memory (`hit`, a row it kept or
 * prefetched for the block), or by a query of its own (`miss`).
 */
async function jobCacheRequests(): Promise<{ hit: number; miss: number }> {
  const counters = await ponderCounters(stack.indexerUrl, ["ponder_indexing_cache_requests_total"]);
  const count = (type: string) => counters.get(`ponder_indexing_cache_requests_total{table="job",type="${type}"}`) ?? 0;
  return { hit: count("hit"), miss: count("miss") };
}

/**
 * The statements matching `pattern` that the database ran while `action` ran, once per run (`pg_stat_statements`,
 * loaded in this suite's stack; nested statements too), each as its normalized text.
 */
async function statementsAround(pattern: RegExp, action: () => Promise<unknown>): Promise<string[]> {
  const client = new pg.Client({ connectionString: stack.postgres.databaseUrl });
  await client.connect();
  try {
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const snapshot = async (): Promise<Map<string, { query: string; calls: number }>> => {
      const { rows } = await client.query<{ queryid: string; query: string; calls: string }>(
        "SELECT queryid::text, query, calls::text FROM pg_stat_statements",
      );
      return new Map(
        rows
          .filter((row) => pattern.test(row.query))
          .map((row) => [row.queryid, { query: row.query, calls: Number(row.calls) }]),
      );
    };
    const before = await snapshot();
    await action();
    const after = await snapshot();
    return [...after].flatMap(([id, { query, calls }]) =>
      Array.from({ length: calls - (before.get(id)?.calls ?? 0) }, () => query),
    );
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  stack = await startIndexedStack("projection", INDEXER_TEST_PORTS, { statementStats: true });
  chain = chainDriver(stack.chain.rpcUrl, stack.deployment);
  await chain.mintStablecoin(customer.address, 10_000n);
  await chain.mintStablecoin(sponsor.address, 10_000n);
  await chain.mintStablecoin(chain.roles.admin.address, 10_000n);
  await chain.mintStake(workerA.address, 2_000n);
  await chain.mintStake(workerB.address, 2_000n);
});

afterAll(async () => {
  await stack?.stop();
});

describe("model catalog", () => {
  it("indexes the launch catalog with tier labels and prices", async () => {
    const models = await stack.client.db.select().from(schema.model).where(fresh());
    expect(models).toHaveLength(stack.deployment.models.length);
    const small = models.find((m) => m.modelId === MODEL_8B);
    expect(small).toMatchObject({ modelKey: KEY_8B, tier: "standard", creditsPerRequest: 8, creditsPer1kTokens: 4 });
    expect(small?.workerCount).toBe(0);
    expect(small?.retired).toBe(false);
  });

  /** Schedules a catalog change, travels past its delay and applies it; returns both receipts. */
  async function scheduleAndApply(
    schedule: Promise<TransactionReceipt>,
  ): Promise<{ scheduled: TransactionReceipt; applied: TransactionReceipt; changeId: bigint }> {
    const scheduled = await step(schedule);
    const log = scheduled.logs
      .map((l) => {
        try {
          return decodeEventLog({ abi: modelCatalogAbi, data: l.data, topics: l.topics });
        } catch {
          return null;
        }
      })
      .find((e) => e?.eventName === "ModelChangeScheduled");
    if (log?.eventName !== "ModelChangeScheduled") throw new Error("no ModelChangeScheduled");
    const changeId = log.args.changeId;
    await chain.travel(CHANGE_DELAY_SECONDS);
    const catalog = stack.deployment.contracts.modelCatalog;
    const applied = await step(chain.send(chain.roles.admin, catalog, modelCatalogAbi, "applyModelChange", [changeId]));
    return { scheduled, applied, changeId };
  }

  it("records a scheduled change with its effective time before it applies", async () => {
    const catalog = stack.deployment.contracts.modelCatalog;
    const params = {
      tier: 0,
      creditsPerRequest: 3,
      creditsPer1kTokens: 2,
      contextWindow: 4096,
      parameters: "1B",
      ownedBy: "test",
    };
    const scheduled = await step(
      chain.send(chain.roles.admin, catalog, modelCatalogAbi, "scheduleAddModel", ["announced-model", params]),
    );
    const block = await chain.publicClient.getBlock({ blockNumber: scheduled.blockNumber });
    const [change] = await stack.client.db
      .select()
      .from(schema.modelChange)
      .where(and(eq(schema.modelChange.modelId, "announced-model"), fresh()));
    expect(change).toMatchObject({
      kind: "add",
      status: "scheduled",
      creditsPerRequest: 3,
      readyAt: block.timestamp + BigInt(CHANGE_DELAY_SECONDS),
    });
    const listed = await stack.client.db
      .select()
      .from(schema.model)
      .where(eq(schema.model.modelKey, modelKeyOf("announced-model")));
    expect(listed).toEqual([]);
  });

  it("follows scheduled addModel, updateModel and retireModel once they apply", async () => {
    const catalog = stack.deployment.contracts.modelCatalog;
    const params = {
      tier: 0,
      creditsPerRequest: 2,
      creditsPer1kTokens: 1,
      contextWindow: 4096,
      parameters: "1B",
      ownedBy: "test",
    };
    const added = await scheduleAndApply(
      chain.send(chain.roles.admin, catalog, modelCatalogAbi, "scheduleAddModel", ["test-model", params]),
    );
    const [change] = await stack.client.db
      .select()
      .from(schema.modelChange)
      .where(eq(schema.modelChange.changeId, added.changeId));
    expect(change).toMatchObject({ kind: "add", status: "applied" });
    const key = modelKeyOf("test-model");
    let [row] = await stack.client.db
      .select()
      .from(schema.model)
      .where(and(eq(schema.model.modelKey, key), fresh()));
    expect(row).toMatchObject({ modelId: "test-model", tier: "lite", creditsPerRequest: 2, retired: false });

    const update = { ...params, tier: 2, creditsPerRequest: 18, creditsPer1kTokens: 9, ownedBy: "tester" };
    await scheduleAndApply(
      chain.send(chain.roles.admin, catalog, modelCatalogAbi, "scheduleUpdateModel", ["test-model", update]),
    );
    [row] = await stack.client.db
      .select()
      .from(schema.model)
      .where(and(eq(schema.model.modelKey, key), fresh()));
    expect(row).toMatchObject({ tier: "pro", creditsPerRequest: 18, creditsPer1kTokens: 9, ownedBy: "tester" });

    const { applied: retired } = await scheduleAndApply(
      chain.send(chain.roles.admin, catalog, modelCatalogAbi, "scheduleRetireModel", ["test-model"]),
    );
    [row] = await stack.client.db
      .select()
      .from(schema.model)
      .where(and(eq(schema.model.modelKey, key), fresh()));
    const block = await chain.publicClient.getBlock({ blockNumber: retired.blockNumber });
    expect(row).toMatchObject({ retired: true, retiredAt: block.timestamp });
  });
});

describe("workers", () => {
  const registry = () => stack.deployment.contracts.workerRegistry;

  it("register inserts the worker and its models and raises each model's workerCount", async () => {
    const receipt = await step(chain.registerWorker(workerA, "http://worker-a:1", [KEY_8B, KEY_70B], 1_000n));
    const [row] = await stack.client.db
      .select()
      .from(schema.worker)
      .where(and(eq(schema.worker.address, lower(workerA.address)), fresh()));
    expect(row).toMatchObject({ endpoint: "http://worker-a:1", stake: 1_000n * SVC, status: "active", slashCount: 0 });
    expect(row?.modelKeys).toEqual([KEY_8B, KEY_70B]);
    const hosted = await stack.client.db
      .select()
      .from(schema.workerModel)
      .where(and(eq(schema.workerModel.worker, lower(workerA.address)), fresh()));
    expect(hosted.map((h) => h.modelKey).sort()).toEqual([KEY_8B, KEY_70B].sort());
    expect(await workerCountOf(KEY_8B)).toBe(1);
    expect(await workerCountOf(KEY_70B)).toBe(1);
    const [event] = await eventsOfTx(receipt.transactionHash);
    expect(event).toMatchObject({ name: "WorkerRegistered", txHash: receipt.transactionHash, wallet: null });
    expect(event?.data).toMatchObject({
      worker: lower(workerA.address),
      stakeSvc: 1000,
      endpoint: "http://worker-a:1",
    });
  });

  it("updateModels replaces worker_model rows and moves workerCount", async () => {
    await step(chain.send(workerA, registry(), workerRegistryAbi, "updateModels", [[KEY_8B]]));
    const hosted = await stack.client.db
      .select()
      .from(schema.workerModel)
      .where(and(eq(schema.workerModel.worker, lower(workerA.address)), fresh()));
    expect(hosted.map((h) => h.modelKey)).toEqual([KEY_8B]);
    expect(await workerCountOf(KEY_8B)).toBe(1);
    expect(await workerCountOf(KEY_70B)).toBe(0);
  });

  it("updateEndpoint and increaseStake update the worker row", async () => {
    await step(chain.send(workerA, registry(), workerRegistryAbi, "updateEndpoint", ["http://worker-a:2"]));
    await step(chain.increaseStake(workerA, 500n));
    const [row] = await stack.client.db
      .select()
      .from(schema.worker)
      .where(and(eq(schema.worker.address, lower(workerA.address)), fresh()));
    expect(row).toMatchObject({ endpoint: "http://worker-a:2", stake: 1_500n * SVC });
  });

  it("startUnbonding marks the worker unbonding with its unlock time", async () => {
    await step(chain.registerWorker(workerB, "http://worker-b:1", [KEY_8B], 1_000n));
    expect(await workerCountOf(KEY_8B)).toBe(2);
    await step(chain.send(workerB, registry(), workerRegistryAbi, "startUnbonding", []));
    const [row] = await stack.client.db
      .select()
      .from(schema.worker)
      .where(and(eq(schema.worker.address, lower(workerB.address)), fresh()));
    const onChain = await chain.publicClient.readContract({
      address: registry(),
      abi: workerRegistryAbi,
      functionName: "getWorker",
      args: [workerB.address],
    });
    expect(row).toMatchObject({ status: "unbonding", unlockAt: onChain.unlockAt });
  });
});

describe("worker bonds", () => {
  const escrow = () => stack.deployment.contracts.creditEscrow;

  it("the bond a payer posts for a worker is its bond, with the posting in its history", async () => {
    // chainDriver.registerWorker posted workerA's bond from the admin before the registration.
    expect(await bondOf(workerA.address)).toMatchObject({
      bond: WORKER_BOND,
      totalPosted: WORKER_BOND,
      totalWithdrawn: 0n,
      totalSeized: 0n,
      seizureCount: 0,
    });
    const [posted] = await bondChangesOf(workerA.address);
    expect(posted).toMatchObject({
      kind: "posted",
      amount: WORKER_BOND,
      bondAfter: WORKER_BOND,
      payer: lower(chain.roles.admin.address),
      jobKey: null,
    });
  });

  it("postBond from a sponsor raises the bond and records the sponsor as payer", async () => {
    await step(
      chain.send(sponsor, stack.deployment.contracts.stablecoin, stablecoinAbi, "approve", [escrow(), SPONSORED_BOND]),
    );
    const receipt = await step(
      chain.send(sponsor, escrow(), creditEscrowAbi, "postBond", [workerA.address, SPONSORED_BOND]),
    );
    expect(await bondOf(workerA.address)).toMatchObject({
      bond: WORKER_BOND + SPONSORED_BOND,
      totalPosted: WORKER_BOND + SPONSORED_BOND,
    });
    const changes = await bondChangesOf(workerA.address);
    expect(changes.at(-1)).toMatchObject({
      kind: "posted",
      amount: SPONSORED_BOND,
      bondAfter: WORKER_BOND + SPONSORED_BOND,
      payer: lower(sponsor.address),
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
    });
  });

  it("withdrawBond lowers the bond and records the withdrawal", async () => {
    const receipt = await step(chain.send(workerA, escrow(), creditEscrowAbi, "withdrawBond", [WITHDRAWN_BOND]));
    const after = WORKER_BOND + SPONSORED_BOND - WITHDRAWN_BOND;
    expect(await bondOf(workerA.address)).toMatchObject({ bond: after, totalWithdrawn: WITHDRAWN_BOND });
    expect((await bondChangesOf(workerA.address)).at(-1)).toMatchObject({
      kind: "withdrawn",
      amount: WITHDRAWN_BOND,
      bondAfter: after,
      payer: null,
      txHash: receipt.transactionHash,
    });
  });

  it("GraphQL serves a worker with its bond and the bond's history", async () => {
    const query = `{ worker(address: "${lower(workerA.address)}") {
      address status bond { bond totalPosted totalWithdrawn } bondChanges(orderBy: "cursor") { items { kind amount payer } }
    } }`;
    const response = await fetch(`${stack.indexerUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await response.json()) as { data?: { worker?: Record<string, unknown> }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.worker).toMatchObject({
      address: lower(workerA.address),
      bond: {
        bond: String(WORKER_BOND + SPONSORED_BOND - WITHDRAWN_BOND),
        totalPosted: String(WORKER_BOND + SPONSORED_BOND),
        totalWithdrawn: String(WITHDRAWN_BOND),
      },
      bondChanges: {
        items: [
          { kind: "posted", amount: String(WORKER_BOND), payer: lower(chain.roles.admin.address) },
          { kind: "posted", amount: String(SPONSORED_BOND), payer: lower(sponsor.address) },
          { kind: "withdrawn", amount: String(WITHDRAWN_BOND), payer: null },
        ],
      },
    });
  });
});

describe("credits", () => {
  it("deposit sets the available balance from the event and counts the credits deposited", async () => {
    const receipt = await step(chain.deposit(customer, 1_000n));
    const block = await chain.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(await accountOf(customer.address)).toMatchObject({
      creditsAvailable: 1_000n,
      creditsLocked: 0n,
      creditsDeposited: 1_000n,
      lastTopUpAt: block.timestamp,
    });
    const [event] = await eventsOfTx(receipt.transactionHash);
    expect(event).toMatchObject({ name: "Deposited", wallet: lower(customer.address) });
    expect(event?.data).toMatchObject({ credits: "1000", balanceAfter: "1000", amount: "10000000" });
  });

  it("depositWithPermit credits the signing wallet in one transaction", async () => {
    const receipt = await step(chain.depositWithPermit(sponsor, 500n));
    expect(await accountOf(sponsor.address)).toMatchObject({ creditsAvailable: 500n, creditsDeposited: 500n });
    expect((await eventsOfTx(receipt.transactionHash)).map((e) => e.name)).toEqual(["Deposited"]);
  });

  it("withdraw lowers the balance and counts the credits withdrawn", async () => {
    const receipt = await step(
      chain.send(customer, stack.deployment.contracts.creditEscrow, creditEscrowAbi, "withdraw", [100n]),
    );
    expect(await accountOf(customer.address)).toMatchObject({ creditsAvailable: 900n, creditsWithdrawn: 100n });
    const [event] = await eventsOfTx(receipt.transactionHash);
    expect(event).toMatchObject({ name: "Withdrawn", wallet: lower(customer.address) });
    expect(event?.data).toMatchObject({ credits: "100", balanceAfter: "900" });
  });

  it("fundReserve is logged with the reserve after it", async () => {
    const receipt = await step(chain.fundReserve(chain.roles.admin, 1_000n));
    const [event] = await eventsOfTx(receipt.transactionHash);
    expect(event).toMatchObject({ name: "ReserveFunded", wallet: null });
    expect(event?.data).toMatchObject({ amount: "10000000", reserveAfter: "10000000" });
  });
});

const customerKeys = ["svc_live_k1", "svc_live_k2", "svc_live_k3"].map(keyHashOf) as [Hex, Hex, Hex];
const sponsorKey = keyHashOf("svc_live_sponsor");

describe("API keys", () => {
  const registry = () => stack.deployment.contracts.apiKeyRegistry;
  const keyRow = async (keyHash: Hex) => {
    const [row] = await stack.client.db
      .select()
      .from(schema.apiKey)
      .where(and(eq(schema.apiKey.keyHash, keyHash), fresh()));
    return row;
  };

  /** The commitment that must precede a registration (ApiKeyRegistry's commit–reveal). */
  const commit = (wallet: typeof customer, keyHash: Hex) =>
    step(chain.send(wallet, registry(), apiKeyRegistryAbi, "commitKey", [keyCommitmentOf(wallet.address, keyHash)]));

  it("registerKey records the key and makes it the wallet's active key", async () => {
    await commit(customer, customerKeys[0]);
    const receipt = await step(chain.send(customer, registry(), apiKeyRegistryAbi, "registerKey", [customerKeys[0]]));
    const block = await chain.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(await keyRow(customerKeys[0])).toMatchObject({
      wallet: lower(customer.address),
      status: "active",
      createdAt: block.timestamp,
    });
    expect(await accountOf(customer.address)).toMatchObject({ keyHash: customerKeys[0], keyStatus: "active" });
  });

  it("rotateKey revokes the old key and activates the new one in one transaction", async () => {
    await commit(customer, customerKeys[1]);
    const receipt = await step(chain.send(customer, registry(), apiKeyRegistryAbi, "rotateKey", [customerKeys[1]]));
    expect(await keyRow(customerKeys[0])).toMatchObject({ status: "revoked" });
    expect((await keyRow(customerKeys[0]))?.revokedAt).not.toBeNull();
    expect(await keyRow(customerKeys[1])).toMatchObject({ status: "active" });
    expect(await accountOf(customer.address)).toMatchObject({ keyHash: customerKeys[1], keyStatus: "active" });
    expect((await eventsOfTx(receipt.transactionHash)).map((e) => e.name)).toEqual(["KeyRevoked", "KeyRegistered"]);
  });

  it("revokeKey leaves the wallet without an active key", async () => {
    await step(chain.send(customer, registry(), apiKeyRegistryAbi, "revokeKey", []));
    expect(await keyRow(customerKeys[1])).toMatchObject({ status: "revoked" });
    expect(await accountOf(customer.address)).toMatchObject({ keyHash: customerKeys[1], keyStatus: "revoked" });
    await commit(customer, customerKeys[2]);
    await step(chain.send(customer, registry(), apiKeyRegistryAbi, "registerKey", [customerKeys[2]]));
    expect(await accountOf(customer.address)).toMatchObject({ keyHash: customerKeys[2], keyStatus: "active" });
  });

  it("suspend and unsuspend flip the wallet's suspension and its key's status", async () => {
    await commit(sponsor, sponsorKey);
    await step(chain.send(sponsor, registry(), apiKeyRegistryAbi, "registerKey", [sponsorKey]));
    const suspended = await step(
      chain.send(chain.roles.operator, registry(), apiKeyRegistryAbi, "suspend", [sponsor.address]),
    );
    expect(await accountOf(sponsor.address)).toMatchObject({ suspended: true, keyStatus: "suspended" });
    expect(await keyRow(sponsorKey)).toMatchObject({ status: "suspended" });
    expect((await eventsOfTx(suspended.transactionHash)).map((e) => e.name)).toEqual(["KeySuspended"]);

    const lifted = await step(
      chain.send(chain.roles.operator, registry(), apiKeyRegistryAbi, "unsuspend", [sponsor.address]),
    );
    expect(await accountOf(sponsor.address)).toMatchObject({ suspended: false, keyStatus: "active" });
    expect(await keyRow(sponsorKey)).toMatchObject({ status: "active" });
    expect((await eventsOfTx(lifted.transactionHash)).map((e) => e.name)).toEqual(["KeyUnsuspended"]);
  });
});

describe("jobs", () => {
  const escrow = () => stack.deployment.contracts.creditEscrow;

  it("openJob inserts a pending job under its job_<ULID> id and locks the escrow on the account", async () => {
    const before = await accountOf(customer.address);
    const { id, jobKey, receipt } = await openJob(customerKeys[2]);
    const row = await jobOf(jobKey);
    expect(row).toMatchObject({
      id,
      wallet: lower(customer.address),
      keyHash: customerKeys[2],
      modelId: MODEL_8B,
      tier: "standard",
      status: "pending",
      creditsLocked: ESCROW_1000_TOKENS,
      escrowTx: receipt.transactionHash,
      escrowBlock: receipt.blockNumber,
      balanceAfter: before.creditsAvailable - ESCROW_1000_TOKENS,
    });
    expect(row.id).toBe(bytes32ToJobId(jobKey));
    expect(await accountOf(customer.address)).toMatchObject({
      creditsAvailable: before.creditsAvailable - ESCROW_1000_TOKENS,
      creditsLocked: ESCROW_1000_TOKENS,
    });
  });

  it("settle records the settlement, releases the lock and charges the account", async () => {
    const before = await accountOf(customer.address);
    const job = await settledJob(customerKeys[2], "hello");
    const row = await jobOf(job.jobKey);
    expect(row).toMatchObject({
      status: "settled",
      worker: lower(workerA.address),
      completionTokens: 100,
      creditsCharged: CHARGE_100_TOKENS,
      creditsRefunded: ESCROW_1000_TOKENS - CHARGE_100_TOKENS,
      settlementTx: job.settleReceipt.transactionHash,
      settlementBlock: job.settleReceipt.blockNumber,
      outputHash: outputHashOf("hello"),
    });
    const after = await accountOf(customer.address);
    expect(after.creditsAvailable).toBe(before.creditsAvailable - CHARGE_100_TOKENS);
    expect(after.creditsLocked).toBe(before.creditsLocked);
    expect(after.creditsCharged).toBe(before.creditsCharged + CHARGE_100_TOKENS);

    const [settled] = (await eventsOfTx(job.settleReceipt.transactionHash)).filter((e) => e.name === "JobSettled");
    expect(settled).toMatchObject({ jobKey: job.jobKey, wallet: lower(customer.address) });
    expect(settled?.data).toMatchObject({
      jobId: job.id,
      modelId: MODEL_8B,
      tier: "standard",
      creditsCharged: "8",
      settlementTx: job.settleReceipt.transactionHash,
      blockNumber: job.settleReceipt.blockNumber.toString(),
      balanceAfter: after.creditsAvailable.toString(),
      worker: lower(workerA.address),
    });
  });

  it("settleBatch settles every job of the batch in one transaction", async () => {
    const first = await openJob(customerKeys[2]);
    const second = await openJob(customerKeys[2]);
    const a = await chain.signedReceipt(workerA, first.jobKey, outputHashOf("one"), 100);
    const b = await chain.signedReceipt(workerA, second.jobKey, outputHashOf("two"), 600);
    const receipt = await step(
      chain.send(chain.roles.gateway, escrow(), creditEscrowAbi, "settleBatch", [
        [a.receipt, b.receipt],
        [a.signature, b.signature],
      ]),
    );
    expect(await jobOf(first.jobKey)).toMatchObject({
      status: "settled",
      settlementTx: receipt.transactionHash,
      creditsCharged: 8n,
    });
    // 600 tokens: 8 + ceil(100 * 4 / 1000) = 9
    expect(await jobOf(second.jobKey)).toMatchObject({
      status: "settled",
      settlementTx: receipt.transactionHash,
      creditsCharged: 9n,
    });
    expect((await accountOf(customer.address)).creditsLocked).toBe(ESCROW_1000_TOKENS);
  });

  it("keeps or prefetches the job row a settlement needs instead of querying it alone (patched Ponder)", async () => {
    // Ponder 0.16.10 learns which rows each handler reads only while backfilling, and before every realtime block
    // it drops the cached rows it does not expect to be read. On a fresh chain it had learned nothing, so each
    // JobSettled queried its job alone: one SELECT per job at any load. The patch lets it learn in realtime too.
    // Two settlements teach it (it samples one event in ten, from the second); the ones after must not miss.
    const TAUGHT = 2;
    const CHECKED = 3;
    for (let n = 0; n < TAUGHT; n++) await settledJob(customerKeys[2], `teach ${n}`);
    const before = await jobCacheRequests();
    for (let n = 0; n < CHECKED; n++) await settledJob(customerKeys[2], `checked ${n}`);
    const after = await jobCacheRequests();

    expect(after.miss - before.miss).toBe(0);
    expect(after.hit - before.hit).toBeGreaterThanOrEqual(CHECKED);
  });

  it("failJob marks the job failed and returns its escrow", async () => {
    const before = await accountOf(customer.address);
    const { jobKey } = await openJob(customerKeys[2]);
    const receipt = await step(chain.send(chain.roles.gateway, escrow(), creditEscrowAbi, "failJob", [jobKey]));
    expect(await jobOf(jobKey)).toMatchObject({
      status: "failed",
      failTx: receipt.transactionHash,
      creditsRefunded: ESCROW_1000_TOKENS,
    });
    expect(await accountOf(customer.address)).toMatchObject({
      creditsAvailable: before.creditsAvailable,
      creditsLocked: before.creditsLocked,
    });
  });

  it("refund after the job timeout and its settle grace marks the job refunded", async () => {
    const before = await accountOf(customer.address);
    const { jobKey } = await openJob(customerKeys[2]);
    // Anyone but the gateway may refund only after the 300 s settle grace that follows the 120 s timeout.
    await chain.travel(421);
    const receipt = await step(chain.send(sponsor, escrow(), creditEscrowAbi, "refund", [jobKey]));
    expect(await jobOf(jobKey)).toMatchObject({ status: "refunded", refundTx: receipt.transactionHash });
    expect(await accountOf(customer.address)).toMatchObject({
      creditsAvailable: before.creditsAvailable,
      creditsLocked: before.creditsLocked,
    });
    const [event] = await eventsOfTx(receipt.transactionHash);
    expect(event?.data).toMatchObject({
      caller: lower(sponsor.address),
      creditsRefunded: ESCROW_1000_TOKENS.toString(),
    });
  });
});

describe("disputes", () => {
  const manager = () => stack.deployment.contracts.disputeManager;
  const disputeOf = async (jobKey: Hex) => {
    const [row] = await stack.client.db
      .select()
      .from(schema.dispute)
      .where(and(eq(schema.dispute.jobKey, jobKey), fresh()));
    return row;
  };

  it("openDispute marks the job disputed and records a pending dispute", async () => {
    const job = await settledJob(customerKeys[2], "rejected case");
    const receipt = await step(chain.openDispute(job.jobKey, job.settlement, outputHashOf("something else")));
    expect(await jobOf(job.jobKey)).toMatchObject({ status: "disputed", disputeTx: receipt.transactionHash });
    expect(await disputeOf(job.jobKey)).toMatchObject({
      jobId: job.id,
      outcome: "pending",
      clientHash: outputHashOf("something else"),
      proofHash: outputHashOf("rejected case"),
      openedTx: receipt.transactionHash,
    });
    const names = (await eventsOfTx(receipt.transactionHash)).map((e) => e.name);
    expect(names.sort()).toEqual(["DisputeOpened", "JobDisputed"]);

    // Rejected by the arbiter: the settlement stands.
    const resolved = await step(
      chain.send(chain.roles.arbiter, manager(), disputeManagerAbi, "resolveDispute", [job.jobKey, false]),
    );
    expect(await disputeOf(job.jobKey)).toMatchObject({ outcome: "rejected", resolutionTx: resolved.transactionHash });
    expect(await jobOf(job.jobKey)).toMatchObject({ status: "settled" });
  });

  it("closeExpired after the arbitration window closes the dispute as expired, the job settled", async () => {
    const job = await settledJob(customerKeys[2], "expired case");
    await step(chain.openDispute(job.jobKey, job.settlement, outputHashOf("other")));
    await chain.travel(stack.deployment.params.arbitrationWindow + 1);
    const closed = await step(chain.send(sponsor, manager(), disputeManagerAbi, "closeExpired", [job.jobKey]));
    expect(await disputeOf(job.jobKey)).toMatchObject({
      outcome: "expired",
      resolutionTx: closed.transactionHash,
      creditsRestored: 0n,
    });
    expect(await jobOf(job.jobKey)).toMatchObject({ status: "settled" });
    const [event] = (await eventsOfTx(closed.transactionHash)).filter((e) => e.name === "DisputeResolved");
    expect(event).toMatchObject({ wallet: lower(customer.address), jobKey: job.jobKey });
    expect(event?.data).toMatchObject({ outcome: "expired", jobId: job.id, worker: lower(workerA.address) });
  });

  let fraudJobKey: Hex | undefined;
  let bondBeforeFraud: bigint | undefined;

  it("an upheld dispute slashes the worker's whole stake, removes it, restores the charge and shows the job refunded", async () => {
    const job = await settledJob(customerKeys[2], "fraud case");
    fraudJobKey = job.jobKey;
    bondBeforeFraud = (await bondOf(workerA.address))?.bond;
    await step(chain.openDispute(job.jobKey, job.settlement, outputHashOf("what the client got")));
    const before = await accountOf(customer.address);
    const resolved = await step(
      chain.send(chain.roles.arbiter, manager(), disputeManagerAbi, "resolveDispute", [job.jobKey, true]),
    );

    expect(await jobOf(job.jobKey)).toMatchObject({ status: "refunded" });
    expect(await disputeOf(job.jobKey)).toMatchObject({
      outcome: "upheld",
      creditsRestored: CHARGE_100_TOKENS,
      slashAmount: 1_500n * SVC,
      resolutionTx: resolved.transactionHash,
    });
    expect(await accountOf(customer.address)).toMatchObject({
      creditsAvailable: before.creditsAvailable + CHARGE_100_TOKENS,
      creditsRestored: before.creditsRestored + CHARGE_100_TOKENS,
    });
    const [worker] = await stack.client.db
      .select()
      .from(schema.worker)
      .where(and(eq(schema.worker.address, lower(workerA.address)), fresh()));
    expect(worker).toMatchObject({ status: "exited", stake: 0n, slashCount: 1, totalSlashed: 1_500n * SVC });

    const names = (await eventsOfTx(resolved.transactionHash)).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(["WorkerSlashed", "JobDisputeClosed", "DisputeResolved"]));
    const [slashed] = (await eventsOfTx(resolved.transactionHash)).filter((e) => e.name === "WorkerSlashed");
    expect(slashed).toMatchObject({ jobKey: job.jobKey, wallet: null });
    expect(slashed?.data).toMatchObject({
      worker: lower(workerA.address),
      slashAmountSvc: 1_500,
      reason: "fraudulent_proof",
      relatedJobId: job.id,
      slashTx: resolved.transactionHash,
    });
  });
  it("an upheld dispute seizes the worker's whole bond into the reserve and records the seizure", async () => {
    expect(fraudJobKey).toBeDefined();
    expect(bondBeforeFraud).toBeGreaterThan(0n);
    expect(await bondOf(workerA.address)).toMatchObject({ bond: 0n, totalSeized: bondBeforeFraud, seizureCount: 1 });
    const seized = (await bondChangesOf(workerA.address)).filter((c) => c.kind === "seized");
    expect(seized).toHaveLength(1);
    expect(seized[0]).toMatchObject({ amount: bondBeforeFraud, bondAfter: 0n, jobKey: fraudJobKey });
    expect(seized[0]?.reserveAfter).toBeGreaterThanOrEqual(bondBeforeFraud!);
  });
});

describe("worker exit", () => {
  it("withdraw after the unbonding delay marks the worker exited and unhosts its models", async () => {
    const before = await workerCountOf(KEY_8B);
    await chain.travel(stack.deployment.params.unbondingDelay + 1);
    await step(chain.send(workerB, stack.deployment.contracts.workerRegistry, workerRegistryAbi, "withdraw", []));
    const [row] = await stack.client.db
      .select()
      .from(schema.worker)
      .where(and(eq(schema.worker.address, lower(workerB.address)), fresh()));
    expect(row).toMatchObject({ status: "exited", stake: 0n });
    const hosted = await stack.client.db
      .select()
      .from(schema.workerModel)
      .where(and(and(eq(schema.workerModel.worker, lower(workerB.address))), fresh()));
    expect(hosted).toHaveLength(0);
    expect(await workerCountOf(KEY_8B)).toBe((before ?? 0) - 1);
  });
});

// The events a webhook can be derived from (docs: indexer/README.md).
const LOGGED = new Set([
  "Deposited",
  "Withdrawn",
  "ReserveFunded",
  "JobOpened",
  "JobSettled",
  "JobFailed",
  "JobRefunded",
  "JobDisputed",
  "JobDisputeClosed",
  "RestitutionPaid",
  "RestitutionOwed",
  "DisputeOpened",
  "DisputeResolved",
  "WorkerRegistered",
  "WorkerSlashed",
  "KeyRegistered",
  "KeyRevoked",
  "KeySuspended",
  "KeyUnsuspended",
]);
const ABIS = [creditEscrowAbi, apiKeyRegistryAbi, modelCatalogAbi, workerRegistryAbi, disputeManagerAbi];

function decodedName(log: { data: Hex; topics: [Hex, ...Hex[]] | [] }): string | undefined {
  for (const abi of ABIS) {
    try {
      return decodeEventLog({ abi, data: log.data, topics: log.topics }).eventName;
    } catch {
      // Not this contract's event.
    }
  }
  return undefined;
}

describe("accounts", () => {
  it("match the escrow's own accountOf for every wallet", async () => {
    const rows = await stack.client.db.select().from(schema.account).where(fresh());
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      const onChain = await chain.publicClient.readContract({
        address: stack.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "accountOf",
        args: [row.wallet],
      });
      expect({ wallet: row.wallet, available: row.creditsAvailable, locked: row.creditsLocked }).toEqual({
        wallet: row.wallet,
        available: onChain.available,
        locked: onChain.locked,
      });
    }
  });
});

describe("worker bonds against the chain", () => {
  it("match the escrow's own bondOf for every worker that ever had a bond", async () => {
    const rows = await stack.client.db.select().from(schema.workerBond).where(fresh());
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      const [bond] = await chain.publicClient.readContract({
        address: stack.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "bondOf",
        args: [row.worker],
      });
      expect({ worker: row.worker, bond: row.bond }).toEqual({ worker: row.worker, bond });
    }
  });
});

describe("chain_event log", () => {
  it("holds exactly one row per logged event, in chain order, with the receipts' ids and tx hashes", async () => {
    const expected = receipts.flatMap((receipt) =>
      receipt.logs
        .map((log) => ({ log, name: decodedName(log) }))
        .filter(({ name }) => name !== undefined && LOGGED.has(name))
        .map(({ log, name }) => ({
          id: `${stack.deployment.chainId}:${log.blockNumber}:${log.logIndex}`,
          name,
          txHash: receipt.transactionHash,
        })),
    );
    const rows = await stack.client.db
      .select({ id: schema.chainEvent.id, name: schema.chainEvent.name, txHash: schema.chainEvent.txHash })
      .from(schema.chainEvent)
      .where(fresh())
      .orderBy(asc(schema.chainEvent.cursor));
    expect(rows).toEqual(expected);
  });

  it("orders cursors by block number then log index", async () => {
    const rows = await stack.client.db
      .select()
      .from(schema.chainEvent)
      .where(fresh())
      .orderBy(asc(schema.chainEvent.cursor));
    const positions = rows.map((r) => [r.blockNumber, r.logIndex] as const);
    const sorted = [...positions].sort(([b1, l1], [b2, l2]) => (b1 === b2 ? l1 - l2 : b1 < b2 ? -1 : 1));
    expect(positions).toEqual(sorted);
    expect(rows.every((r) => r.cursor.length === 18)).toBe(true);
  });
});

/** Rows in a stable order (SQL without ORDER BY has none), compared as their JSON. */
function sortedRows<row>(rows: row[]): string[] {
  return rows
    .map((r) => JSON.stringify(r, (_key, value: unknown) => (typeof value === "bigint" ? `${value}n` : value)))
    .sort();
}

describe("restart", () => {
  it("resumes against the initialised database without duplicating rows", async () => {
    const snapshot = async () => {
      const db = stack.client.db;
      const [accounts, others, events] = await Promise.all([
        db.select().from(schema.account).where(fresh()),
        Promise.all(
          [schema.apiKey, schema.model, schema.worker, schema.workerModel, schema.job, schema.dispute].map(async (t) =>
            sortedRows(await db.select().from(t).where(fresh())),
          ),
        ),
        db.select().from(schema.chainEvent).where(fresh()).orderBy(asc(schema.chainEvent.cursor)),
      ]);
      return { accounts, others, events };
    };
    const before = await snapshot();
    const balanceBefore = (await accountOf(customer.address)).creditsAvailable;
    await stack.stopIndexer();

    // The chain moves on while the indexer is down.
    const missed = await chain.deposit(customer, 100n);
    receipts.push(missed);
    await stack.startIndexer();
    await stack.indexed(missed.blockNumber);

    const after = await snapshot();
    expect(after.accounts).toHaveLength(before.accounts.length);
    expect(after.others).toEqual(before.others);
    // Only the deposit made while the indexer was down was added; nothing was replayed twice.
    expect(after.events.slice(0, before.events.length)).toEqual(before.events);
    expect(after.events.slice(before.events.length).map((e) => [e.name, e.txHash])).toEqual([
      ["Deposited", missed.transactionHash],
    ]);
    expect((await accountOf(customer.address)).creditsAvailable).toBe(balanceBefore + 100n);
  });
});

describe("latency", () => {
  it("measures the lag from a mined block to its row being readable through @ponder/client", async () => {
    const escrow = stack.deployment.contracts.creditEscrow;
    await chain.send(customer, stack.deployment.contracts.stablecoin, stablecoinAbi, "approve", [escrow, 10n ** 12n]);
    const lags: number[] = [];
    for (let i = 0; i < 40; i++) {
      const receipt = await chain.send(customer, escrow, creditEscrowAbi, "deposit", [1_000_000n]);
      // Hardhat automines: the block exists once the receipt is back. Time from there to the row.
      const mined = performance.now();
      await waitFor(
        "the deposit's row",
        async () =>
          (
            await stack.client.db
              .select({ id: schema.chainEvent.id })
              .from(schema.chainEvent)
              .where(and(eq(schema.chainEvent.txHash, receipt.transactionHash), fresh()))
          ).length > 0,
        { intervalMs: 5 },
      );
      lags.push(performance.now() - mined);
    }
    lags.sort((x, y) => x - y);
    const median = lags[Math.floor(lags.length / 2)]!;
    const p90 = lags[Math.floor(lags.length * 0.9)]!;
    console.log(
      `indexer lag over ${lags.length} blocks: median ${median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms, max ${lags.at(-1)!.toFixed(0)} ms`,
    );
    expect(lags).toHaveLength(40);
  });
});

describe("the indexer process", () => {
  it("samples its event-loop delay every EVENT_LOOP_SAMPLE_MS, not Ponder's 1 ms (a timer that kept it awake idle)", async () => {
    const metrics = await (await fetch(`${stack.indexerUrl}/metrics`)).text();
    const min = /^nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(metrics)?.[1];
    expect(min, "Ponder's /metrics lists nodejs_eventloop_lag_min_seconds").toBeDefined();
    // Each sample is the time between two firings of the monitor's timer, so none is shorter than its interval.
    expect(Number(min) * 1000).toBeGreaterThanOrEqual(EVENT_LOOP_SAMPLE_MS * 0.9);
  });
  it("keeps its live-query table for the connection instead of creating and dropping one per block (patched Ponder)", async () => {
    // Ponder 0.16.10 runs CREATE TEMP TABLE … ON COMMIT DROP in every indexed block's transaction (3.3 ms each and
    // a set of catalog rows left dead); patches/ponder+0.16.10.patch keeps it, emptied at each commit.
    const tableOids = async (): Promise<string[]> => {
      const client = new pg.Client({ connectionString: stack.postgres.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ oid: string }>(
          "SELECT oid::text FROM pg_class WHERE relname = 'live_query_tables' AND relpersistence = 't'",
        );
        return rows.map((row) => row.oid);
      } finally {
        await client.end();
      }
    };
    const SMALLEST_DEPOSIT = 100n; // credits: the escrow's MIN_DEPOSIT
    await step(chain.deposit(customer, SMALLEST_DEPOSIT));
    const before = await tableOids();
    for (let block = 0; block < 3; block++) await step(chain.deposit(customer, SMALLEST_DEPOSIT));
    const after = await tableOids();

    expect(before.length).toBeGreaterThan(0);
    expect(after.filter((oid) => !before.includes(oid))).toEqual([]);
  });

  it("creates its live-query table once per connection, not in every block (patched Ponder)", async () => {
    // Ponder 0.16.10 asks for the table (CREATE TEMP TABLE IF NOT EXISTS) at the start of every indexed block's
    // transaction: a round trip a block. Blocks may still land on a pooled connection that has not made it yet.
    const DEPOSITS = 5; // each at least one indexed block
    const SMALLEST_DEPOSIT = 100n; // credits: the escrow's MIN_DEPOSIT
    const creates = await statementsAround(/^CREATE TEMP TABLE IF NOT EXISTS live_query_tables/i, async () => {
      for (let deposit = 0; deposit < DEPOSITS; deposit++) await step(chain.deposit(customer, SMALLEST_DEPOSIT));
    });

    expect(creates.length).toBeLessThan(DEPOSITS);
  });

  it("stamps the reorg copies of only the tables a block wrote, in one statement (patched Ponder)", async () => {
    // Ponder 0.16.10 ends every indexed block with one UPDATE per indexed table (11 here) to stamp the block's
    // checkpoint on its reorg copies, whether or not the block wrote the table. A deposit writes two: the wallet's
    // account and its chain_event row.
    const SMALLEST_DEPOSIT = 100n; // credits: the escrow's MIN_DEPOSIT
    const stamps = await statementsAround(/set "checkpoint" = /i, () =>
      step(chain.deposit(customer, SMALLEST_DEPOSIT)),
    );

    expect(stamps.length).toBe(1);
    const stamped = [...stamps[0]!.matchAll(/"_reorg__(\w+)"/g)].map((match) => match[1]);
    expect([...new Set(stamped)].sort()).toEqual(["account", "chain_event"]);
  });

  it("writes a block's new rows by COPY however few they are (patched Ponder)", async () => {
    // Ponder 0.16.10 builds a drizzle multi-row INSERT for 20 new rows or fewer, its largest CPU cost per block when
    // blocks hold a job or two. A deposit's block inserts one chain_event row.
    const SMALLEST_DEPOSIT = 100n; // credits: the escrow's MIN_DEPOSIT
    const writes = await statementsAround(/^(copy|insert into) "[^"]+"\."chain_event"/i, () =>
      step(chain.deposit(customer, SMALLEST_DEPOSIT)),
    );

    expect(writes).toEqual([`COPY "${stack.databaseSchema}"."chain_event" FROM STDIN`]);
  });
  it("indexes the blocks that waited for it in one transaction, each block's reorg copies stamped with its own checkpoint (patched Ponder)", async () => {
    // Ponder 0.16.10 indexes every block in a transaction of its own (a commit, a prefetch round, a checkpoint
    // update and a NOTIFY to every gateway each), though on a chain that mines a block per transaction its head
    // poll brings several at once. Holding the indexer's checkpoint row keeps it inside its first block's
    // transaction while the next blocks queue up behind it. Each indexing transaction ends with one update of that
    // row, so their count is the number of transactions.
    const SMALLEST_DEPOSIT = 100n; // credits: the escrow's MIN_DEPOSIT
    const DEPOSITS = 4; // two blocks each: the stablecoin approval, then the deposit
    const deposits: TransactionReceipt[] = [];
    const checkpointUpdates = await statementsAround(/^update "[^"]+"\."_ponder_checkpoint"/i, async () => {
      const holder = new pg.Client({ connectionString: stack.postgres.databaseUrl });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query(`SELECT 1 FROM "${stack.databaseSchema}"."_ponder_checkpoint" FOR UPDATE`);
        for (let deposit = 0; deposit < DEPOSITS; deposit++) {
          deposits.push(await chain.deposit(customer, SMALLEST_DEPOSIT));
        }
        const lastBlock = Number(deposits.at(-1)!.blockNumber);
        await waitFor("the indexer's sync to reach the last deposit's block", async () => {
          const gauges = await ponderCounters(stack.indexerUrl, ["ponder_sync_block"]);
          return [...gauges.values()].some((block) => block >= lastBlock);
        });
      } finally {
        await holder.query("COMMIT").catch(() => undefined);
        await holder.end();
      }
      await stack.indexed(deposits.at(-1)!.blockNumber);
    });
    receipts.push(...deposits);

    // The first block's transaction waited on the held row; every block that queued meanwhile went in one more.
    const blocks = Number(deposits.at(-1)!.blockNumber - deposits[0]!.blockNumber) + 2;
    expect(checkpointUpdates.length).toBeLessThanOrEqual(2);
    expect(blocks).toBe(2 * DEPOSITS);
    const client = new pg.Client({ connectionString: stack.postgres.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ block_number: string; stamped_block: string | null }>(
        `SELECT e.block_number::text, substring(r.checkpoint, 27, 16)::bigint::text AS stamped_block
           FROM "${stack.databaseSchema}"."chain_event" e
           LEFT JOIN "${stack.databaseSchema}"."_reorg__chain_event" r ON r.id = e.id
          WHERE e.block_number BETWEEN $1 AND $2 AND e.name = 'Deposited'`,
        [deposits[0]!.blockNumber.toString(), deposits.at(-1)!.blockNumber.toString()],
      );
      // Every deposit is indexed, and its reorg copy carries its own block, not the group's last.
      expect(rows.map((row) => BigInt(row.block_number)).sort((x, y) => (x < y ? -1 : 1))).toEqual(
        deposits.map((receipt) => receipt.blockNumber),
      );
      for (const row of rows) expect(row.stamped_block).toBe(row.block_number);
    } finally {
      await client.end();
    }
  });
});

describe("live sync", () => {
  it("follows a burst of blocks at more than Ponder's default JSON-RPC rate (a local node's limit is lifted)", async () => {
    // Ponder's limiter starts at 20 requests a second, 10 of them taken by the 100 ms head polls, and every block
    // costs at least one request: under it, BURST blocks take at least BURST / 10 seconds to index.
    const BURST = 300;
    const BLOCKS_PER_SECOND_UNDER_DEFAULT_LIMIT = 10;
    const head = (await chain.publicClient.getBlockNumber()) + BigInt(BURST);
    const started = performance.now();
    await chain.mineOneByOne(BURST);
    await stack.indexed(head);
    const seconds = (performance.now() - started) / 1000;
    console.log(`indexed a burst of ${BURST} blocks in ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThan(BURST / BLOCKS_PER_SECOND_UNDER_DEFAULT_LIMIT / 2);
  });
});
