import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPublicClient, http, parseGwei, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { findFreePort } from "../../scripts/stack/ports.js";
import { startChain, type RunningChain } from "../../scripts/stack/startChain.js";
import { FeeOracle } from "./feeOracle.js";
import { hedgedTransport } from "./hedgedTransport.js";
import { RawTransactionPipe } from "./rawTransactionPipe.js";
import { TransactionManager, TransactionNotSentError } from "./transactionManager.js";

// Hardhat's default account #7: nothing else in this test's own node signs with it.
const KEY: Hex = "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356";
const account = privateKeyToAccount(KEY);
const TARGET = "0x000000000000000000000000000000000000dEaD";
const CAP = parseGwei("50");
const REPLACE_AFTER_MS = 200;

let chain: RunningChain;
let client: PublicClient;

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

function manager(rpcUrls = [chain.rpcUrl]): TransactionManager {
  return new TransactionManager({
    chainId: chain.chainId,
    account,
    client,
    pipe: new RawTransactionPipe(rpcUrls, 2_000),
    fees: new FeeOracle(client, { maxFeePerGas: CAP, minPriorityFeePerGas: parseGwei("0.001"), ttlMs: 0 }),
    replaceAfterMs: REPLACE_AFTER_MS,
    finalityDepth: 2,
    // The tests drive the watch themselves, tick by tick.
    monitorMs: 60_000,
    receiptPollMs: 50,
    logger: pino({ level: "silent" }),
  });
}

const call = { to: TARGET, data: "0x" as Hex, gas: 30_000n } as const;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mine = (blocks = 1) => rpc("hardhat_mine", [`0x${blocks.toString(16)}`]);
const minedNonce = () => client.getTransactionCount({ address: account.address, blockTag: "latest" });

beforeAll(async () => {
  chain = await startChain({ port: await findFreePort(18_600, 18_699) });
  client = createPublicClient({ transport: http(chain.rpcUrl), pollingInterval: 50 });
});

afterAll(async () => {
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
    const transactions = manager();
    const hash = await transactions.send(call);
    expect(await rpc("hardhat_dropTransaction", [hash])).toBe(true);
    await transactions.tick();
    expect(transactions.health().rebroadcasts).toBe(1);
    await mine();
    expect((await transactions.waitMined(hash, 5_000)).transactionHash).toBe(hash);
  });

  it("broadcasts again a transaction a reorg orphaned, so its nonce is mined on the new branch", async () => {
    const transactions = manager();
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

  it("fills a nonce another run left stuck with a no-op, so its own transactions are mined", async () => {
    await manager().send(call); // a previous run's transaction, never mined, then the run is gone
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

  it("sends through the other endpoints when one is down", async () => {
    const transactions = manager(["http://127.0.0.1:1", chain.rpcUrl]);
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

/** The hash the node holds now for the transaction first sent as `hash` (the manager's latest version). */
async function latestOf(transactions: TransactionManager, hash: Hex): Promise<Hex | undefined> {
  const block = (await rpc("eth_getBlockByNumber", ["pending", false])) as { transactions?: Hex[] } | null;
  void transactions;
  void hash;
  return block?.transactions?.[0];
}
