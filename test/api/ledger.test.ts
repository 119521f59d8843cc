import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeEventLog, decodeFunctionData, keccak256, parseTransaction, toFunctionSelector, type Hex } from "viem";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { chatBody, expectErrorBody, rawRequest, sseData, type ErrorBody } from "../support/api.js";
import {
  accountOf,
  contracts,
  creditEscrowAbi,
  spareGatewaySigner,
  mined,
  publicClient,
  walletClient,
} from "../support/chain.js";
import { startExtraGateway } from "../support/gateways.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet } from "../support/wallets.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// Issue 17, hot path v2: credits reserved in the PostgreSQL ledger from the index (no RPC call on the request
// path), locks group-committed through openJobBatch, and a lock the chain refuses costing the client nothing
// (docs/DESIGN.md "Reservation ledger", api/README.md "Lock modes").

const LITE = "llama-3.2-3b-instruct";
/** 40 per request + 20 per 1k tokens: max_tokens 1000 locks 60 credits, so 1 USDG (100 credits) covers one. */
const MAX = "llama-3.3-70b-instruct";
const OPEN_JOB_BATCH = toFunctionSelector("openJobBatch((bytes32,bytes32,bytes32,uint32,uint64)[])");
/** The finality check of a settled job (api/jobs/jobLifecycle.ts): a read after the answer, not on the request path. */
const JOB_OF = toFunctionSelector("jobOf(bytes32)");

type Completion = { usage: { service: { job_id: string; escrow_tx: string } } };

/** A JSON-RPC proxy in front of the stack's node that counts every call by method (batched calls included). */
async function countingRpcProxy(target: string) {
  const calls = new Map<string, number>();
  /** eth_call by the called function's selector. */
  const reads = new Map<string, number>();
  const lockBatches = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const parsed = JSON.parse(body) as
        | { method: string; params?: unknown[] }
        | { method: string; params?: unknown[] }[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
        calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
        if (call.method === "eth_call") {
          const selector = ((call.params?.[0] as { data?: Hex; input?: Hex } | undefined)?.data ?? "0x").slice(0, 10);
          reads.set(selector, (reads.get(selector) ?? 0) + 1);
        }
        if (call.method === "eth_sendRawTransaction") {
          const raw = call.params?.[0] as Hex;
          const data = parseTransaction(raw).data;
          if (data?.startsWith(OPEN_JOB_BATCH)) lockBatches.add(keccak256(raw));
        }
      }
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body }).then(
        async (upstream) => {
          res.writeHead(upstream.status, { "content-type": "application/json" });
          res.end(await upstream.text());
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    reads,
    lockBatches,
    reset: () => {
      calls.clear();
      reads.clear();
      lockBatches.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The extra gateway may still hold keep-alive connections; they would keep close() waiting.
        server.closeAllConnections();
      }),
  };
}

/** A counter or gauge of the main gateway's /metrics (0 when absent). */
async function metric(name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${stackInfo().apiUrl}/metrics`)).text();
  const line = text.split("\n").find((row) => row.startsWith(`${name}${labels} `));
  return line ? Number(line.split(" ")[1]) : 0;
}

/** The job ids (bytes32, lower-case) with a JobOpened in the transaction. */
async function jobsOpenedIn(hash: Hex): Promise<Set<string>> {
  const receipt = await publicClient().getTransactionReceipt({ hash });
  const opened = new Set<string>();
  for (const log of receipt.logs) {
    try {
      const event = decodeEventLog({ abi: creditEscrowAbi, data: log.data, topics: log.topics });
      if (event.eventName === "JobOpened") opened.add(event.args.jobId.toLowerCase());
    } catch {
      // Another contract's event.
    }
  }
  return opened;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("hot path v2: reservation ledger and batched locks", () => {
  it("serving completions makes no RPC read: key and balance come from the index, locks leave in shared batches", async () => {
    const proxy = await countingRpcProxy(stackInfo().rpcUrl);
    cleanups.push(proxy.close);
    // A second gateway of the operator: a signer given the gateway roles at deployment.
    const signer = spareGatewaySigner(0);
    const gateway = await startExtraGateway(
      { RPC_URL: proxy.url, GATEWAY_PRIVATE_KEY: signer.privateKey, LOCK_MODE: "submitted" },
      "api_ledger_rpc",
    );
    const client = await createClientWallet({ usdg: 5n });
    const warmUp = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(LITE, { max_tokens: 20 }),
      baseUrl: gateway.apiUrl,
    });
    expect(warmUp.status, warmUp.body).toBe(200);

    proxy.reset();
    const requests = 12;
    const answers = await Promise.all(
      Array.from({ length: requests }, () =>
        rawRequest("POST", "/v1/chat/completions", {
          apiKey: client.apiKey,
          body: chatBody(LITE, { max_tokens: 20 }),
          baseUrl: gateway.apiUrl,
        }),
      ),
    );
    for (const answer of answers) expect(answer.status, answer.body).toBe(200);
    console.log(`[ledger] RPC calls while serving ${requests} completions:`, Object.fromEntries(proxy.calls));

    // No contract read (key status, balance) for any request; the chain only receives the lock and settlement
    // transactions (and the background head/receipt polling), and, once a job is settled, at most one `jobOf` of
    // the finality check (issue 25), which runs after the answer.
    const { [JOB_OF]: finalityReads = 0, ...requestReads } = Object.fromEntries(proxy.reads);
    expect(requestReads).toEqual({});
    expect(finalityReads).toBeLessThanOrEqual(requests);
    // Concurrent locks share transactions (group commit).
    expect(proxy.lockBatches.size).toBeGreaterThan(0);
    expect(proxy.lockBatches.size).toBeLessThan(requests);
    // Each job's escrow transaction is its batch's, with the job's own JobOpened in it.
    for (const answer of answers) {
      const { job_id, escrow_tx } = answer.json<Completion>().usage.service;
      expect(answer.headers["x-service-tx-hash"]).toBe(escrow_tx);
      expect(proxy.lockBatches.has(escrow_tx.toLowerCase())).toBe(true);
      expect((await jobsOpenedIn(escrow_tx as Hex)).has(jobIdToBytes32(job_id).toLowerCase())).toBe(true);
    }
  });

  it("the escrow transaction of a batch is decodable as openJobBatch with one lock per job in it", async () => {
    const client = await createClientWallet({ usdg: 2n });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(LITE, { max_tokens: 20 }) }),
      ),
    );
    const byTx = new Map<string, string[]>();
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(200);
      const { job_id, escrow_tx } = answer.json<Completion>().usage.service;
      byTx.set(escrow_tx, [...(byTx.get(escrow_tx) ?? []), job_id]);
    }
    for (const [hash, jobIds] of byTx) {
      const tx = await publicClient().getTransaction({ hash: hash as Hex });
      const call = decodeFunctionData({ abi: creditEscrowAbi, data: tx.input });
      expect(call.functionName).toBe("openJobBatch");
      const locked = (call.args[0] as readonly { jobId: Hex }[]).map((lock) => lock.jobId.toLowerCase());
      for (const jobId of jobIds) expect(locked).toContain(jobIdToBytes32(jobId).toLowerCase());
    }
  });

  it("a deposit followed at once by a request is served: the ledger waits for the index before refusing", async () => {
    // createClientWallet registers the key and deposits, then the request goes out without waiting for the index.
    const client = await createClientWallet({ usdg: 1n });
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(LITE, { max_tokens: 20 }),
    });
    expect(response.status, response.body).toBe(200);
  });

  it("error: concurrent requests for the last credits: one is served, the others get 402 before any lock is sent", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const refusedBefore = await metric("gateway_unconfirmed_lock_refused_total", '{reason="insufficient_credits"}');
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        rawRequest("POST", "/v1/chat/completions", {
          apiKey: client.apiKey,
          body: chatBody(MAX, { max_tokens: 1000 }),
        }),
      ),
    );
    const served = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expectErrorBody(answer, 402, "insufficient_credits");
      // Refused by the ledger: no job, no lock.
      expect(answer.headers["x-service-job-id"]).toBeUndefined();
    }
    expect(await metric("gateway_unconfirmed_lock_refused_total", '{reason="insufficient_credits"}')).toBe(
      refusedBefore,
    );
  });

  it("error: a lock the chain skips stops the job, the client gets the spec's error and nothing is charged", async () => {
    // The ledger does not track spending caps: a request over the wallet's cap is routed on its unmined lock and
    // the escrow skips the lock (JobOpenSkipped, SpendingCapExceeded).
    const client = await createClientWallet({ usdg: 1n });
    await mined(
      await walletClient(client.account).writeContract({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        functionName: "setSpendingCap",
        args: [1n],
        chain: undefined,
      }),
    );
    const before = await accountOf(client.wallet);
    const refusedBefore = await metric("gateway_unconfirmed_lock_refused_total", '{reason="spending_cap_exceeded"}');
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(LITE, { max_tokens: 100, stream: true }),
    });
    if (response.status === 200) {
      // The stream had started: it ends with the error event.
      const events = sseData(response.body);
      const error = JSON.parse(events.find((data) => data.includes('"error"')) ?? "{}") as ErrorBody;
      expect(error.error.code).toBe("spending_cap_exceeded");
    } else {
      expectErrorBody(response, 402, "spending_cap_exceeded");
    }
    const jobId = response.headers["x-service-job-id"] as string;
    expect(jobId).toMatch(/^job_/);
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
    // Its batch skipped it: no JobOpened for this job.
    const batch = await jobsOpenedIn(response.headers["x-service-tx-hash"] as Hex);
    expect(batch.has(jobIdToBytes32(jobId).toLowerCase())).toBe(false);
    await waitFor("the refusal counted", async () => {
      return (
        (await metric("gateway_unconfirmed_lock_refused_total", '{reason="spending_cap_exceeded"}')) ===
        refusedBefore + 1
      );
    });
    const job = await rawRequest("GET", `/v1/jobs/${jobId}`, { apiKey: client.apiKey });
    expect(job.status, job.body).toBe(200);
    expect(job.json<{ status: string; credits_charged: number }>()).toMatchObject({
      status: "failed",
      credits_charged: 0,
    });
  });

  it.each([
    ["LOCK_MODE=confirmed", { LOCK_MODE: "confirmed" }],
    [
      "submitted mode beyond LOCK_UNCONFIRMED_MAX_CREDITS",
      { LOCK_MODE: "submitted", LOCK_UNCONFIRMED_MAX_CREDITS: "0" },
    ],
  ])("%s: a refused lock is answered before any worker sees the job", async (_name, env) => {
    const signer = spareGatewaySigner(env.LOCK_MODE === "confirmed" ? 1 : 2);
    const schema = env.LOCK_MODE === "confirmed" ? "api_ledger_confirmed" : "api_ledger_bounded";
    const gateway = await startExtraGateway({ GATEWAY_PRIVATE_KEY: signer.privateKey, ...env }, schema);
    const client = await createClientWallet({ usdg: 1n });
    await mined(
      await walletClient(client.account).writeContract({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        functionName: "setSpendingCap",
        args: [1n],
        chain: undefined,
      }),
    );
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(LITE, { max_tokens: 100, stream: true }),
      baseUrl: gateway.apiUrl,
    });
    // Not a stream that started and then failed: the refusal comes before routing.
    expectErrorBody(response, 402, "spending_cap_exceeded");
    const db = new pg.Client({ connectionString: stackInfo().databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT status, worker FROM ${schema}.gateway_job WHERE wallet = $1`, [
        client.wallet.toLowerCase(),
      ]);
      expect(rows).toEqual([{ status: "failed", worker: null }]);
    } finally {
      await db.end();
    }
  });

  it("the gateway reports its unconfirmed-lock exposure as metrics", async () => {
    const text = await (await fetch(`${stackInfo().apiUrl}/metrics`)).text();
    expect(text).toMatch(/^gateway_unconfirmed_lock_credits \d+/m);
    expect(text).toMatch(/^gateway_unconfirmed_lock_jobs \d+/m);
    expect(text).toContain("# TYPE gateway_unconfirmed_lock_refused_credits_total counter");
    expect(text).toContain("# TYPE gateway_lock_batch_size histogram");
  });
});
