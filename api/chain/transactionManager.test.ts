import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createPublicClient,
  http,
  parseGwei,
  parseTransaction,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { findFreePort } from "../../scripts/stack/ports.js";
import { startChain, type RunningChain } from "../../scripts/stack/startChain.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import { FeeOracle } from "./feeOracle.js";
import { hedgedTransport } from "./hedgedTransport.js";
import { RawTransactionPipe } from "./rawTransactionPipe.js";
import { TransactionManager, TransactionNotSentError, type TransactionManagerOptions } from "./transactionManager.js";
import { TransactionStore, type TransactionLog } from "./transactionStore.js";

// Hardhat's default accounts #7 and #8: nothing else in this test's own node signs with them.
const KEY: Hex = "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356";
const OTHER_KEY: Hex = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97";
const account = privateKeyToAccount(KEY);
const otherAccount = privateKeyToAccount(OTHER_KEY);
const SCHEMA = `txmgr_test_${process.pid}`;
const TARGET = "0x000000000000000000000000000000000000dEaD";
const CAP = parseGwei("50");
const REPLACE_AFTER_MS = 200;

let chain: RunningChain;
let client: PublicClient;
let postgres: RunningPostgres;
let stateDir: string;
let pool: pg.Pool;
const started: TransactionManager[] = [];

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

interface ManagerOptions {
  rpcUrls?: string[];
  /** The chain reads the manager makes (default: the test chain's client). */
  reads?: TransactionManagerOptions["client"];
  pipe?: Pick<RawTransactionPipe, "send">;
  signer?: LocalAccount;
  replaceAfterMs?: number;
  log?: TransactionLog;
}

/** A gateway's transaction manager; a second one for the same signer is that gateway after a restart. */
function manager({
  rpcUrls = [chain.rpcUrl],
  signer = account,
  replaceAfterMs = REPLACE_AFTER_MS,
  log,
  pipe,
  reads = client,
}: ManagerOptions = {}) {
  const transactions = new TransactionManager({
    chainId: chain.chainId,
    account: signer,
    client: reads,
    pipe: pipe ?? new RawTransactionPipe(rpcUrls, 2_000),
    fees: new FeeOracle(client, { maxFeePerGas: CAP, minPriorityFeePerGas: parseGwei("0.001"), ttlMs: 0 }),
    log: log ?? new TransactionStore(pool, chain.chainId, signer.address),
    replaceAfterMs,
    finalityDepth: 2,
    // The tests drive the watch themselves, tick by tick.
    monitorMs: 60_000,
    receiptPollMs: 50,
    logger: pino({ level: "silent" }),
  });
  started.push(transactions);
  return transactions;
}

/** The rows the gateway keeps for `signer`, by nonce. */
async function rowsOf(signer = account): Promise<{ nonce: number; hashes: Hex[]; purpose: string }[]> {
  const result = await pool.query<{ nonce: string; hashes: Hex[]; purpose: string }>(
    "SELECT nonce::text, hashes, purpose FROM gateway_transaction WHERE signer = $1 ORDER BY nonce",
    [signer.address.toLowerCase()],
  );
  return result.rows.map((row) => ({ ...row, nonce: Number(row.nonce) }));
}

const call = { to: TARGET, data: "0x" as Hex, gas: 30_000n } as const;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mine = (blocks = 1) => rpc("hardhat_mine", [`0x${blocks.toString(16)}`]);
const minedNonce = () => client.getTransactionCount({ address: account.address, blockTag: "latest" });

beforeAll(async () => {
  chain = await startChain({ port: await findFreePort(18_600, 18_699) });
  client = createPublicClient({ transport: http(chain.rpcUrl), pollingInterval: 50 });
  // The real database the gateway keeps its transactions in; DATABASE_URL (CI) or an embedded server.
  stateDir = mkdtempSync(path.join(tmpdir(), "transaction-manager-"));
  postgres = await startPostgres({ stateDir, port: await findFreePort(11_100, 11_139), database: "transactions" });
  pool = createPool(postgres.databaseUrl, SCHEMA, 4);
  await migrate(pool, SCHEMA);
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((transactions) => transactions.stop()));
});

afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await pool?.end();
  await postgres?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  await chain?.stop();
});

beforeEach(async () => {
  // Each test starts on an empty mempool with blocks only when it mines them.
  await rpc("evm_setAutomine", [true]);
  await mine();
  await rpc("evm_setAutomine", [false]);
  await rpc("evm_setIntervalMining", [0]);
  await rpc("hardhat_setNextBlockBaseFeePerGas", ["0x3b9aca00"]);
  await mine();
  // And no gateway run before it.
  await pool.query("DELETE FROM gateway_transaction");
});

describe("TransactionManager", () => {
  it("replaces a transaction not mined in time at the same nonce with fees at least 12.5% higher", async () => {
    const transactions = manager();
    const first = await transactions.send(call);
    const before = await client.getTransaction({ hash: first });
    await pause(REPLACE_AFTER_MS + 50);
    await transactions.tick();
    expect(transactions.health().replacements).toBe(1);
    await mine();
    const receipt = await transactions.waitMined(first, 5_000);
    const mined = await client.getTransaction({ hash: receipt.transactionHash });
    expect(receipt.transactionHash).not.toBe(first);
    expect(mined.nonce).toBe(before.nonce);
    expect(mined.maxFeePerGas! * 8n).toBeGreaterThanOrEqual(before.maxFeePerGas! * 9n);
    expect(mined.maxPriorityFeePerGas! * 8n).toBeGreaterThanOrEqual(before.maxPriorityFeePerGas! * 9n);
  });

  it("never pays more than the cap while the base fee is above it, and lands once it falls back", async () => {
    const transactions = manager();
    await rpc("hardhat_setNextBlockBaseFeePerGas", [`0x${parseGwei("500").toString(16)}`]);
    await mine();
    const hash = await transactions.send(call);
    for (let round = 0; round < 4; round++) {
      await pause(REPLACE_AFTER_MS + 50);
      await transactions.tick();
    }
    await mine();
    expect(transactions.health().pending).toBe(1);
    const held = await client.getTransaction({ hash: (await latestOf(transactions, hash)) ?? hash });
    expect(held.maxFeePerGas).toBeLessThanOrEqual(CAP);
    await rpc("hardhat_setNextBlockBaseFeePerGas", ["0x3b9aca00"]);
    await mine();
    const receipt = await transactions.waitMined(hash, 5_000);
    expect(receipt.status).toBe("success");
  });

  it("broadcasts again a transaction the node dropped", async () => {
    // Not replaced meanwhile however slow the machine: the same bytes are what must come back.
    const transactions = manager({ replaceAfterMs: 60_000 });
    const hash = await transactions.send(call);
    expect(await rpc("hardhat_dropTransaction", [hash])).toBe(true);
    await transactions.tick();
    expect(transactions.health().rebroadcasts).toBe(1);
    await mine();
    expect((await transactions.waitMined(hash, 5_000)).transactionHash).toBe(hash);
  });

  it("asks the node whether it still holds a pending transaction only from the second pass after its sending", async () => {
    let lookups = 0;
    const reads: TransactionManagerOptions["client"] = {
      request: client.request,
      getBlockNumber: client.getBlockNumber,
      getTransactionCount: client.getTransactionCount,
      getTransactionReceipt: client.getTransactionReceipt,
      getTransaction: (args) => {
        lookups += 1;
        return client.getTransaction(args);
      },
    };
    const transactions = manager({ replaceAfterMs: 60_000, reads });
    await transactions.tick();
    const hash = await transactions.send(call);
    await transactions.tick();
    expect(lookups).toBe(0);
    await transactions.tick();
    expect(lookups).toBe(1);
    await mine();
    expect((await transactions.waitMined(hash, 5_000)).transactionHash).toBe(hash);
  });

  it("asks the node for its pending nonce only while a nonce below its next is not its own", async () => {
    // On Hardhat's node a "pending" read runs every transaction in the pool: a pass with no gap must not make one.
    let pendingReads = 0;
    const reads: TransactionManagerOptions["client"] = {
      request: client.request,
      getBlockNumber: client.getBlockNumber,
      getTransactionCount: (args) => {
        if (args.blockTag === "pending") pendingReads += 1;
        return client.getTransactionCount(args);
      },
      getTransactionReceipt: client.getTransactionReceipt,
      getTransaction: client.getTransaction,
    };
    const transactions = manager({ replaceAfterMs: 60_000, reads });
    const first = await transactions.send(call);
    const beforePasses = pendingReads;
    await transactions.send(call);
    await transactions.tick();
    await transactions.tick();
    await mine();
    await transactions.tick();
    expect((await transactions.waitMined(first, 5_000)).transactionHash).toBe(first);
    expect(pendingReads).toBe(beforePasses);
    expect(transactions.health().nonceGap).toBe(0);
  });

  it("broadcasts again a transaction a reorg orphaned, so its nonce is mined on the new branch", async () => {
    const transactions = manager({ replaceAfterMs: 60_000 });
    const snapshot = await rpc("evm_snapshot");
    const hash = await transactions.send(call);
    await mine();
    await transactions.tick();
    const nonce = (await client.getTransaction({ hash })).nonce;
    expect(await minedNonce()).toBe(nonce + 1);
    // The branch that held it is replaced by a longer one without it.
    await rpc("evm_revert", [snapshot]);
    await rpc("hardhat_dropTransaction", [hash]).catch(() => undefined);
    await mine(3);
    expect(await minedNonce()).toBe(nonce);
    await transactions.tick();
    await mine();
    await transactions.tick();
    expect(await minedNonce()).toBe(nonce + 1);
    expect((await client.getTransactionReceipt({ hash })).status).toBe("success");
  });

  it("fills a nonce another sender left stuck with a no-op, so its own transactions are mined", async () => {
    // An operator's script signing with the gateway's key: nothing of it is in the gateway's record.
    const stuck = await account.signTransaction({
      type: "eip1559",
      chainId: chain.chainId,
      to: TARGET,
      gas: 30_000n,
      nonce: await client.getTransactionCount({ address: account.address, blockTag: "pending" }),
      maxFeePerGas: parseGwei("3"),
      maxPriorityFeePerGas: parseGwei("0.001"),
    });
    await rpc("eth_sendRawTransaction", [stuck]);
    const transactions = manager();
    const hash = await transactions.send(call);
    await transactions.tick();
    expect(transactions.health().nonceGap).toBe(1);
    await pause(REPLACE_AFTER_MS + 50);
    await transactions.tick();
    expect(transactions.health().gapFills).toBe(1);
    await mine();
    const receipt = await transactions.waitMined(hash, 5_000);
    expect(receipt.status).toBe("success");
    const filler = await client.getTransaction({ blockHash: receipt.blockHash, index: 0 });
    expect(filler.to?.toLowerCase()).toBe(account.address.toLowerCase());
  });

  it("turns a transaction every node refused into a no-op at its nonce, so it never lands later", async () => {
    const transactions = manager();
    const start = await minedNonce();
    await rpc("evm_setAutomine", [true]);
    // A gas limit above the block's refuses the transaction outright.
    await expect(transactions.send({ ...call, gas: 100_000_000n })).rejects.toBeInstanceOf(TransactionNotSentError);
    const next = await transactions.send(call);
    await transactions.tick();
    await transactions.tick();
    expect(await minedNonce()).toBe(start + 2);
    const filler = await client.getTransaction({
      blockNumber: (await client.getTransactionReceipt({ hash: next })).blockNumber - 1n,
      index: 0,
    });
    expect(filler.nonce).toBe(start);
    expect(filler.to?.toLowerCase()).toBe(account.address.toLowerCase());
  });

  it("tells the hash as soon as the transaction is signed, before it is recorded (so before any node has it)", async () => {
    const store = new TransactionStore(pool, chain.chainId, account.address);
    let saves = 0;
    const log = Object.assign(Object.create(store) as TransactionStore, {
      save: (row: Parameters<TransactionStore["save"]>[0]) => {
        saves++;
        return store.save(row);
      },
    });
    const transactions = manager({ log });
    let told: { hash: Hex; savesBefore: number } | undefined;
    const hash = await transactions.send(call, (signed) => (told = { hash: signed, savesBefore: saves }));
    expect(told).toEqual({ hash, savesBefore: 0 });
    expect(saves).toBe(1);
  });

  it("a transaction signed while the one before it is still being recorded and sent reaches the node after it", async () => {
    // The lock and the settlement batchers send side by side through one manager: the node must still get their
    // transactions in nonce order, or one would wait in its queue for a nonce it has not seen.
    const pipe = new RawTransactionPipe([chain.rpcUrl], 2_000);
    const broadcast: number[] = [];
    const transactions = manager({
      pipe: {
        send: (raw: Hex) => {
          broadcast.push(Number(parseTransaction(raw).nonce));
          return pipe.send(raw);
        },
      },
    });
    const second = Promise.withResolvers<Hex>();
    const first = await transactions.send(call, () => {
      transactions.send(call).then(second.resolve, second.reject);
    });
    const next = await second.promise;
    expect(broadcast).toHaveLength(2);
    expect(broadcast[1]).toBe(broadcast[0]! + 1);
    await mine();
    for (const hash of [first, next]) {
      expect((await client.getTransactionReceipt({ hash })).status).toBe("success");
    }
  });

  it("sends through the other endpoints when one is down", async () => {
    const transactions = manager({ rpcUrls: ["http://127.0.0.1:1", chain.rpcUrl] });
    const hash = await transactions.send(call);
    await mine();
    await transactions.tick();
    expect((await transactions.waitMined(hash, 5_000)).status).toBe("success");
  });

  it("reads through another endpoint, within the hedge delay, while the first one is stalled", async () => {
    // An endpoint that accepts connections and never answers: the worst way one fails.
    const stalled = createServer(() => undefined);
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    try {
      const stalledUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
      const reader = createPublicClient({
        transport: hedgedTransport({ urls: [stalledUrl, chain.rpcUrl], timeoutMs: 5_000, hedgeAfterMs: 100 }),
      });
      const started = Date.now();
      expect(await reader.getBlockNumber({ cacheTime: 0 })).toBe(await client.getBlockNumber({ cacheTime: 0 }));
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      stalled.closeAllConnections();
      stalled.close();
    }
  });

  it("reports the age of the oldest transaction not mined yet", async () => {
    const transactions = manager();
    await transactions.send(call);
    await pause(100);
    expect(transactions.health().oldestPendingAgeMs).toBeGreaterThanOrEqual(100);
    await mine();
    await transactions.tick();
    expect(transactions.health()).toMatchObject({ pending: 0, oldestPendingAgeMs: 0 });
  });
});

describe("TransactionManager across a restart", () => {
  it("records a transaction before it is broadcast and forgets it once final", async () => {
    const transactions = manager();
    const hash = await transactions.send({ ...call, purpose: "openJobBatch" });
    expect(await rowsOf()).toEqual([{ nonce: expect.any(Number), hashes: [hash], purpose: "openJobBatch" }]);
    await mine(2);
    await transactions.tick();
    await transactions.tick();
    expect(await rowsOf()).toEqual([]);
  });

  it("records the transactions sent in the same tick in one statement", async () => {
    let statements = 0;
    // The real pool, counted: each query is one statement and, outside a transaction block, one commit.
    const counting = {
      query: ((...args: Parameters<pg.Pool["query"]>) => {
        statements++;
        return pool.query(...args);
      }) as pg.Pool["query"],
    };
    const transactions = manager({ log: new TransactionStore(counting, chain.chainId, account.address) });
    await Promise.all([transactions.send(call), transactions.send(call), transactions.send(call)]);
    expect(statements).toBe(1);
    expect(await rowsOf()).toHaveLength(3);
  });

  it("a transaction sent before a restart is mined after it", async () => {
    const hash = await manager().send(call);
    const nonce = (await client.getTransaction({ hash })).nonce;
    const restarted = manager();
    await restarted.start();
    expect(restarted.health()).toMatchObject({ tracked: 1, pending: 1, nonceGap: 0 });
    await mine();
    const receipt = await restarted.waitMined(hash, 5_000);
    expect(receipt.status).toBe("success");
    // The restarted gateway signs after it, not at its nonce.
    const next = await restarted.send(call);
    expect((await client.getTransaction({ hash: next })).nonce).toBe(nonce + 1);
  });

  it("a transaction the node dropped before a restart is rebroadcast after it", async () => {
    const hash = await manager().send(call);
    expect(await rpc("hardhat_dropTransaction", [hash])).toBe(true);
    const restarted = manager({ replaceAfterMs: 60_000 });
    await restarted.start();
    expect(restarted.health().rebroadcasts).toBe(1);
    await mine();
    expect((await restarted.waitMined(hash, 5_000)).transactionHash).toBe(hash);
  });

  it("a replacement signed before a restart is watched, and replaced again, after it", async () => {
    const first = manager();
    const hash = await first.send(call);
    await pause(REPLACE_AFTER_MS + 50);
    await first.tick();
    expect(first.health().replacements).toBe(1);
    const [row] = await rowsOf();
    expect(row?.hashes).toHaveLength(2);
    const restarted = manager();
    await restarted.start();
    await pause(REPLACE_AFTER_MS + 50);
    await restarted.tick();
    // At least once; twice when a loaded host let the replacement delay pass before start()'s own watch too (a CI
    // run under load counted 2). Each replacement is one more hash on the row.
    const { replacements } = restarted.health();
    expect(replacements).toBeGreaterThanOrEqual(1);
    await mine();
    const receipt = await restarted.waitMined(hash, 5_000);
    expect(receipt.status).toBe("success");
    expect(receipt.transactionHash).not.toBe(hash);
    expect((await rowsOf())[0]?.hashes).toHaveLength(2 + replacements);
  });

  it("a nonce gap found at start is filled", async () => {
    const before = manager();
    const lost = await before.send(call);
    const after = await before.send(call);
    const nonce = (await client.getTransaction({ hash: lost })).nonce;
    // The node lost the first and nothing records it any more: a hole every later nonce queues behind.
    await rpc("hardhat_dropTransaction", [lost]);
    await pool.query("DELETE FROM gateway_transaction WHERE nonce = $1", [nonce]);
    // Filled at start, not after the replacement delay: nothing at all holds that nonce.
    const restarted = manager({ replaceAfterMs: 60_000 });
    await restarted.start();
    expect(restarted.health().gapFills).toBe(1);
    await mine();
    expect((await restarted.waitMined(after, 5_000)).status).toBe("success");
    expect(await minedNonce()).toBe(nonce + 2);
    const filler = await client.getTransaction({
      blockNumber: await client.getBlockNumber({ cacheTime: 0 }),
      index: 0,
    });
    expect(filler).toMatchObject({ nonce, to: account.address.toLowerCase() });
  });

  it("two managers for different signers do not see each other's rows", async () => {
    const mine7 = await manager().send(call);
    const mine8 = await manager({ signer: otherAccount }).send(call);
    // Not about replacement: a slow machine must not see the 200 ms replacement delay pass before the start.
    const restarted7 = manager({ replaceAfterMs: 60_000 });
    const restarted8 = manager({ signer: otherAccount, replaceAfterMs: 60_000 });
    await Promise.all([restarted7.start(), restarted8.start()]);
    expect(restarted7.health().tracked).toBe(1);
    expect(restarted8.health().tracked).toBe(1);
    expect((await rowsOf()).map((row) => row.hashes)).toEqual([[mine7]]);
    expect((await rowsOf(otherAccount)).map((row) => row.hashes)).toEqual([[mine8]]);
    await mine();
    expect((await restarted7.waitMined(mine7, 5_000)).from).toBe(account.address.toLowerCase());
    expect((await restarted8.waitMined(mine8, 5_000)).from).toBe(otherAccount.address.toLowerCase());
  });
});

/** The hash the node holds now for the transaction first sent as `hash` (the manager's latest version). */
async function latestOf(transactions: TransactionManager, hash: Hex): Promise<Hex | undefined> {
  const block = (await rpc("eth_getBlockByNumber", ["pending", false])) as { transactions?: Hex[] } | null;
  void transactions;
  void hash;
  return block?.transactions?.[0];
}
