import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { serializeTransaction, type Hex, type TransactionSerializableEIP1559 } from "viem";
import { API_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";
import { expectConserved, report } from "../chaos/support/faults.js";
import { publicClient } from "../support/chain.js";
import { diagnosed } from "../support/stackDiagnostics.js";
import { stackInfo } from "../support/stackInfo.js";
import { chainStatusOf, rpc } from "./chainRpc.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { RPC_PROXY_URL } from "./chainfaultsStack.js";
import { setProxyMode } from "./rpcProxy.js";

// Issue 25: a 1 s chain under light load, one fault at a time (fee spike above the gateway's cap, a dropped
// transaction, reorgs that lose or re-include blocks, an RPC endpoint stalled). After each: the gateway recovered
// by itself, every job answered in full is settled on the final chain, every webhook event stands for a fact the
// final chain has, and the conservation audit holds.

const MODEL = "qwen3-1.7b";
/** Recovery (no transaction pending for long, no nonce gap, /readyz 200) within this bound of the fault's end. */
const RECOVERY_BOUND_MS = 20_000;
/** The API (which reads the index) reports what the chain has within this bound of the chain having it. */
const API_FOLLOWS_CHAIN_MS = 20_000;

let client: ClientWallet;

type Answer = { status: number; jobId: string | null; at: number; ms: number };

async function complete(): Promise<Answer> {
  const at = Date.now();
  try {
    const response = await fetch(`${stackInfo().apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: "user", content: "Say something short." }],
        max_tokens: 8,
      }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await response.json().catch(() => null)) as { id?: string } | null;
    const jobId = response.status === 200 && body?.id ? body.id.replace(/^chatcmpl-/, "") : null;
    return { status: response.status, jobId, at, ms: Date.now() - at };
  } catch {
    return { status: 0, jobId: null, at, ms: Date.now() - at };
  }
}

/** Two clients' worth of requests (one every 250 ms) until stopped. */
function startLoad(): { stop: () => Promise<Answer[]> } {
  const running: Promise<Answer>[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      running.push(complete());
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return Promise.all(running);
    },
  };
}

const signer = () => stackInfo().gateways[0]!.signer;

/** The gateway's transactions waiting in the node's mempool. */
async function pendingGatewayTxs(): Promise<{ hash: Hex; nonce: number }[]> {
  const block = (await rpc("eth_getBlockByNumber", ["pending", true])) as {
    transactions: { hash: Hex; from: string; nonce: Hex }[];
  } | null;
  return (block?.transactions ?? [])
    .filter((tx) => tx.from.toLowerCase() === signer())
    .map((tx) => ({ hash: tx.hash, nonce: Number(tx.nonce) }));
}

/** The signed bytes of every transaction in blocks `from`..`to` (to send them again on the other branch). */
async function rawTransactionsOf(from: bigint, to: bigint): Promise<Hex[]> {
  const raws: Hex[] = [];
  for (let number = from; number <= to; number++) {
    const block = await publicClient().getBlock({ blockNumber: number, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.type !== "eip1559" || tx.to === null) continue;
      const unsigned: TransactionSerializableEIP1559 = {
        type: "eip1559",
        chainId: tx.chainId,
        nonce: tx.nonce,
        to: tx.to,
        value: tx.value,
        data: tx.input,
        gas: tx.gas,
        maxFeePerGas: tx.maxFeePerGas,
        maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
        accessList: tx.accessList,
      };
      raws.push(serializeTransaction(unsigned, { r: tx.r, s: tx.s, yParity: tx.yParity }));
    }
  }
  return raws;
}

type Readiness = { status: number; pending: number; oldest: number; gap: number };

async function readiness(): Promise<Readiness> {
  const response = await fetch(`${stackInfo().apiUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
  const body = (await response.json()) as {
    transactions?: { pending: number; oldest_pending_seconds: number; nonce_gap: number };
    error?: { details?: { tx_oldest_pending_seconds?: number; tx_nonce_gap?: number } };
  };
  return {
    status: response.status,
    pending: body.transactions?.pending ?? -1,
    oldest: body.transactions?.oldest_pending_seconds ?? body.error?.details?.tx_oldest_pending_seconds ?? -1,
    gap: body.transactions?.nonce_gap ?? body.error?.details?.tx_nonce_gap ?? -1,
  };
}

/** Waits until the gateway is ready with no transaction pending for long and no nonce gap; ms it took. */
async function recovered(since: number): Promise<number> {
  await waitFor(
    "the gateway recovered (ready, nothing pending > 2 s, no nonce gap)",
    async () => {
      const state = await readiness().catch(() => undefined);
      return state !== undefined && state.status === 200 && state.oldest < 2 && state.gap === 0;
    },
    { timeoutMs: RECOVERY_BOUND_MS, intervalMs: 200 },
  );
  return Date.now() - since;
}

/** Webhook events (recorded, whether or not anyone subscribed) that name a transaction and its block. */
async function chainFactEvents(): Promise<{ id: string; event: string; tx: Hex; block: number }[]> {
  const db = new pg.Client({ connectionString: stackInfo().databaseUrl });
  await db.connect();
  try {
    const rows = await db.query<{ id: string; event: string; body: string }>(
      `SELECT id, event, body FROM ${API_SCHEMA}.webhook_event`,
    );
    return rows.rows.flatMap((row) => {
      const data = (JSON.parse(row.body) as { data: Record<string, unknown> }).data;
      const tx = Object.entries(data).find(([key, value]) => key.endsWith("_tx") && typeof value === "string")?.[1];
      const block = data.block_number;
      return typeof tx === "string" && typeof block === "number"
        ? [{ id: row.id, event: row.event, tx: tx as Hex, block }]
        : [];
    });
  } finally {
    await db.end();
  }
}

/** Jobs whose API resource is not `settled` with an escrow and a settlement transaction the chain mined. */
async function apiDisagreements(jobIds: string[]): Promise<string[]> {
  const disagreeing: string[] = [];
  for (const jobId of jobIds) {
    const job = (await (
      await fetch(`${stackInfo().apiUrl}/v1/jobs/${jobId}`, {
        headers: { authorization: `Bearer ${client.apiKey}` },
        signal: AbortSignal.timeout(5_000),
      })
    ).json()) as { status?: string; on_chain?: { escrow_tx?: Hex; settlement_tx?: Hex } };
    const onChain = job.on_chain ?? {};
    if (job.status !== "settled" || !(await minedOk(onChain.escrow_tx)) || !(await minedOk(onChain.settlement_tx)))
      disagreeing.push(`${jobId} ${job.status} ${onChain.escrow_tx} ${onChain.settlement_tx}`);
  }
  return disagreeing;
}

async function minedOk(hash: Hex | undefined): Promise<boolean> {
  return (
    hash !== undefined &&
    (await publicClient()
      .getTransactionReceipt({ hash })
      .then((receipt) => receipt.status === "success")
      .catch(() => false))
  );
}

/**
 * The checks after every fault: each job answered 200 is settled on the chain as it now stands, each webhook event
 * naming a transaction has it mined in the block it names, and the conservation audit.
 */
async function expectChainAgrees(answers: Answer[]): Promise<Record<string, unknown>> {
  const answered = answers.flatMap((answer) => (answer.jobId ? [answer.jobId] : []));
  expect(answered.length).toBeGreaterThan(0);
  const started = Date.now();
  await waitFor(
    "every job answered in full settled on the final chain",
    async () => {
      for (const jobId of answered) if ((await chainStatusOf(jobId)) !== "settled") return false;
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
  const settledWithinMs = Date.now() - started;
  // The API says so too, naming transactions the final chain has mined, once its index has followed the chain
  // (the index trails the node by a poll; a wait that fails says how far the index and the gateway were).
  let disagreeing: string[] = [];
  const chainSettledAt = Date.now();
  await diagnosed(
    () =>
      waitFor(
        "the API reports every job answered in full settled, by transactions on the final chain",
        async () => {
          disagreeing = await apiDisagreements(answered);
          return disagreeing.length === 0;
        },
        { timeoutMs: API_FOLLOWS_CHAIN_MS, intervalMs: 500 },
      ),
    () => [`disagreeing: ${disagreeing.length}, first: ${disagreeing.slice(0, 3).join("; ")}`],
  );
  const apiFollowedWithinMs = Date.now() - chainSettledAt;
  // Facts the index has not buried FINALITY_DEPTH deep yet are not announced; wait a few blocks for the rest.
  await sleep(5_000);
  const events = await chainFactEvents();
  const missing: string[] = [];
  for (const event of events) {
    const receipt = await publicClient()
      .getTransactionReceipt({ hash: event.tx })
      .catch(() => undefined);
    if (!receipt || Number(receipt.blockNumber) !== event.block) missing.push(`${event.event} ${event.id} ${event.tx}`);
  }
  expect(missing).toEqual([]);
  const audit = await expectConserved();
  const counts: Record<string, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return {
    answers: counts,
    slowestMs: Math.max(...answers.map((a) => a.ms)),
    settledWithinMs,
    apiFollowedWithinMs,
    events: events.length,
    audit,
  };
}

/** Every job of the client as the API lists it (id and status), newest first. */
async function apiJobs(): Promise<{ id: string; status: string }[]> {
  const jobs: { id: string; status: string }[] = [];
  let before: string | null = null;
  do {
    const response = await fetch(`${stackInfo().apiUrl}/v1/jobs?limit=100${before ? `&before=${before}` : ""}`, {
      headers: { authorization: `Bearer ${client.apiKey}` },
      signal: AbortSignal.timeout(5_000),
    });
    const page = (await response.json()) as {
      data: { id: string; status: string }[];
      has_more: boolean;
      next_cursor: string | null;
    };
    jobs.push(...page.data.map((job) => ({ id: job.id, status: job.status })));
    before = page.has_more ? page.next_cursor : null;
  } while (before);
  return jobs;
}

/** Whether the API's state of a job agrees with the chain's: the same outcome once either side has one. */
function agrees(api: string, chain: string): boolean {
  switch (chain) {
    case "settled":
    case "disputed":
      return api === chain;
    case "refunded":
      return api === "refunded";
    // A gateway's failJob: a failure, or a timeout the gateway resolved early (reported refunded).
    case "failed":
      return api === "failed" || api === "refunded";
    // Never locked (or the lock lost): nothing was charged.
    case "none":
      return api === "failed";
    // Still locked: not an outcome the client was told of as charged; an error answer's escrow waits for its
    // refund after the chain deadline.
    case "open":
      return api !== "settled" && api !== "disputed";
    default:
      return false;
  }
}

/**
 * Issue 25 "After a reorg every job's API state agrees with the final chain": every job of the client, listed by
 * the API (not only the answered ones), once the open ones have closed, has the outcome the chain has.
 */
async function expectEveryJobAgreesWithChain(): Promise<{ jobs: number; byStatus: Record<string, number> }> {
  let disagreeing: string[] = [];
  let jobs: { id: string; status: string }[] = [];
  await waitFor(
    "every job's API state agrees with the chain",
    async () => {
      jobs = await apiJobs();
      disagreeing = [];
      for (const job of jobs) {
        const chain = await chainStatusOf(job.id);
        if (!agrees(job.status, chain)) disagreeing.push(`${job.id} api=${job.status} chain=${chain}`);
      }
      return disagreeing.length === 0;
    },
    { timeoutMs: 60_000, intervalMs: 1_000 },
  ).catch(() => undefined);
  expect(disagreeing).toEqual([]);
  const byStatus: Record<string, number> = {};
  for (const job of jobs) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
  return { jobs: jobs.length, byStatus };
}

beforeAll(async () => {
  client = await createClientWallet({ usdg: 20n });
  expect((await complete()).status).toBe(200);
});

describe("a 1 s chain that misbehaves, under light load", () => {
  it("fee spike above the cap: transactions wait at the cap, /readyz says so, and everything lands once fees fall", async () => {
    const load = startLoad();
    await sleep(1_000);
    await rpc("hardhat_setNextBlockBaseFeePerGas", [`0x${(1_000n * 10n ** 9n).toString(16)}`]);
    let sawNotReady = false;
    const spikeEnds = Date.now() + 10_000;
    while (Date.now() < spikeEnds) {
      const state = await readiness().catch(() => undefined);
      if (state?.status === 503 && state.oldest > 5) sawNotReady = true;
      await sleep(500);
    }
    await rpc("hardhat_setNextBlockBaseFeePerGas", ["0x3b9aca00"]);
    const recoveryMs = await recovered(Date.now());
    const answers = await load.stop();
    expect(sawNotReady).toBe(true);
    expect(answers.filter((answer) => answer.status === 0 || (answer.status >= 500 && answer.status !== 503))).toEqual(
      [],
    );
    report("fee spike 1000 gwei for 10 s (cap 20 gwei)", { recoveryMs, ...(await expectChainAgrees(answers)) });
  });

  it("dropped transaction: the gateway broadcasts it again", async () => {
    const load = startLoad();
    let dropped: { hash: Hex; nonce: number } | undefined;
    await waitFor(
      "a gateway transaction in the mempool to drop",
      async () => {
        for (const tx of await pendingGatewayTxs()) {
          if ((await rpc("hardhat_dropTransaction", [tx.hash])) === true) dropped ??= tx;
        }
        return dropped !== undefined;
      },
      { timeoutMs: 15_000, intervalMs: 20 },
    );
    const droppedAt = Date.now();
    await waitFor(
      "the dropped transaction's nonce mined",
      async () =>
        (await publicClient().getTransactionCount({ address: signer() as Hex, blockTag: "latest" })) > dropped!.nonce,
      { timeoutMs: RECOVERY_BOUND_MS, intervalMs: 100 },
    );
    const minedAfterMs = Date.now() - droppedAt;
    const recoveryMs = await recovered(droppedAt);
    await sleep(2_000);
    const answers = await load.stop();
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    report("dropped transaction", {
      dropped: dropped?.hash,
      minedAfterMs,
      recoveryMs,
      ...(await expectChainAgrees(answers)),
    });
  });

  it.each([
    ["lost", true],
    ["re-included", false],
  ])(
    "reorg whose transactions are %s: orphans are broadcast again and every answered job settles",
    async (kind, lose) => {
      const load = startLoad();
      try {
        await sleep(1_000);
        const snapshot = await rpc("evm_snapshot");
        const headBefore = await publicClient().getBlockNumber({ cacheTime: 0 });
        await sleep(2_200);
        const headAtReorg = await publicClient().getBlockNumber({ cacheTime: 0 });
        const orphaned = await rawTransactionsOf(headBefore + 1n, headAtReorg);
        await rpc("evm_revert", [snapshot]);
        if (lose) {
          // The 1 s miner may take one between the listing and its drop: that one is re-included, not lost.
          for (const tx of await pendingGatewayTxs())
            await rpc("hardhat_dropTransaction", [tx.hash]).catch((error: unknown) => {
              if (!String(error).includes("already mined")) throw error;
            });
        }
        // The other branch carries the same transactions, as a node that saw them gossiped would mine them.
        else for (const raw of orphaned) await rpc("eth_sendRawTransaction", [raw]).catch(() => undefined);
        // The new branch outgrows the old one.
        await rpc("hardhat_mine", ["0x4"]);
        const reorgAt = Date.now();
        const recoveryMs = await recovered(reorgAt);
        await sleep(2_000);
        const answers = await load.stop();
        expect(
          answers.filter((answer) => answer.status === 0 || (answer.status >= 500 && answer.status !== 503)),
        ).toEqual([]);
        report(`reorg of ${headAtReorg - headBefore} blocks (${orphaned.length} transactions), transactions ${kind}`, {
          recoveryMs,
          ...(await expectChainAgrees(answers)),
          apiAgrees: await expectEveryJobAgreesWithChain(),
        });
      } finally {
        // A failed case must not leave its clients sending into the next one.
        await load.stop();
      }
    },
  );

  it("one RPC endpoint stalled: no request is lost", async () => {
    const load = startLoad();
    await sleep(1_000);
    await setProxyMode(RPC_PROXY_URL, "stalled");
    await sleep(12_000);
    await setProxyMode(RPC_PROXY_URL, "up");
    const recoveryMs = await recovered(Date.now());
    const answers = await load.stop();
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    report("first RPC endpoint stalled 12 s", { recoveryMs, ...(await expectChainAgrees(answers)) });
  });
});
