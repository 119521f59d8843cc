import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { LocalAccount } from "viem";
import { EVENT_NAMES, startDispatcher, type Dispatcher } from "../../api/webhooks/index.js";
import { ponderIndexReader } from "../../api/webhooks/chainEventFeed.js";
import { enqueueProcessingEvent } from "../../api/webhooks/enqueueProcessingEvent.js";
import { JobStore } from "../../api/jobs/jobStore.js";
import { insertProcessingJob } from "./support/processingJob.js";
import { chainActions, type ChainActions } from "./support/chainActions.js";
import { startHttpsReceiver, type HttpsReceiver } from "./support/httpsReceiver.js";
import { selfSignedCert } from "./support/selfSignedCert.js";
import { freshGatewaySchema, loadStackDeployment } from "./support/startWebhookStack.js";
import { indexKeyDirectory, startWebhookApi } from "./support/webhookApi.js";
import { verifySignature } from "./support/verifySignature.js";
import { Webhook } from "standardwebhooks";
import type pg from "pg";
import { waitFor } from "../../scripts/stack/waitFor.js";

// Every event name of the spec, derived from real chain activity (Hardhat + deployed contracts + Ponder) or the
// gateway's job table, delivered over HTTPS to a receiver TEST DOUBLE, signed, with the data the README documents.

const stack = inject("webhookStack");
const STANDARD = "llama-3.1-8b-instruct"; // standard tier: 8 credits per request
const MAX = "llama-3.3-70b-instruct"; // max tier: 40 credits per request

interface Envelope {
  id: string;
  event: string;
  created_at: string;
  api_version: string;
  data: Record<string, unknown>;
}

let chain: ChainActions;
let receiver: HttpsReceiver;
let dispatcher: Dispatcher;
let pool: pg.Pool;
let api: { baseUrl: string; close: () => Promise<void> };
let wallet: LocalAccount;
let worker: LocalAccount;
let secret: string;
const facts: Record<string, unknown> = {};

const envelopes = (): Envelope[] => receiver.requests.map((r) => JSON.parse(r.rawBody) as Envelope);
const delivered = (event: string) => envelopes().filter((e) => e.event === event);
const deliveredAtLeast = (event: string, count = 1) =>
  waitFor(`${count} × ${event}`, () => (delivered(event).length >= count ? delivered(event) : undefined));

beforeAll(async () => {
  const deployment = loadStackDeployment(stack);
  chain = chainActions(stack.rpcUrl, deployment);
  const cert = selfSignedCert();
  receiver = await startHttpsReceiver(cert, 8770);
  ({ pool } = await freshGatewaySchema(stack.databaseUrl, "events"));
  const policy = { allowPrivateTargets: true, allowHttpLoopback: false };
  api = await startWebhookApi({ pool, keys: indexKeyDirectory(stack.indexerUrl), policy, port: 8763 });

  wallet = await chain.wallet(13);
  worker = await chain.wallet(30);
  const { apiKey, keyHash } = await chain.registerKey(wallet);
  // The key must be indexed before the API can authenticate it.
  await waitFor("key indexed", async () => {
    const response = await fetch(`${api.baseUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${apiKey}` } });
    return response.status === 200;
  });
  const created = await fetch(`${api.baseUrl}/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, events: [...EVENT_NAMES] }),
  });
  expect(created.status).toBe(201);
  secret = ((await created.json()) as { secret: string }).secret;

  dispatcher = startDispatcher({
    pool,
    index: ponderIndexReader(stack.indexerUrl),
    policy,
    retryScheduleMs: [0, 200, 200, 200, 200],
    timeoutMs: 2_000,
    extraCa: cert.cert,
  });

  // The story: top up, a worker joins, jobs settle / fail / time out, a dispute is upheld (slash), and the
  // balance crosses the low-credit threshold twice with a recovery in between.
  await chain.deposit(wallet, 150n); // 150
  await chain.registerWorker(worker, [STANDARD, MAX]);
  const job1 = await chain.openJob(keyHash, STANDARD, 100); // 142
  facts["job1"] = job1;
  const jobs = new JobStore(pool);
  await jobs.insert({
    jobId: job1.jobId,
    jobKey: job1.jobKey,
    wallet: wallet.address,
    keyHash,
    model: STANDARD,
    tier: "standard",
    stream: false,
    maxTokens: 100,
    creditsLocked: 8,
    promptTokens: 12,
  });
  await jobs.transition(job1.jobId, ["pending"], "processing", {
    worker: worker.address.toLowerCase(),
    processing_at: new Date(),
  });
  const settled = await chain.settle(worker, job1.jobKey, 50, "the worker's answer"); // charge 8 → 142
  facts["settled"] = settled;
  facts["disputeTx"] = (
    await chain.openDispute(job1.jobKey, settled.settlement, "what the client received")
  ).transactionHash;
  await chain.fundReserve(1_000n);
  facts["slashTx"] = (await chain.resolveDispute(job1.jobKey, true)).transactionHash; // +8 restored → 150
  const job2 = await chain.openJob(keyHash, STANDARD, 100); // 142
  facts["job2"] = job2;
  facts["failTx"] = (await chain.failJob(job2.jobKey)).transactionHash; // 150
  const job3 = await chain.openJob(keyHash, STANDARD, 100); // 142
  facts["job3"] = job3;
  facts["refundTx"] = (await chain.refundAfterTimeout(job3.jobKey)).transactionHash; // 150
  const low1 = await chain.openJob(keyHash, MAX, 100); // 110
  const low2 = await chain.openJob(keyHash, MAX, 100); // 70: crosses below 100
  await chain.openJob(keyHash, STANDARD, 100); // 62: still below, no second event
  await chain.failJob(low1.jobKey); // 102: back above → re-armed
  facts["lowTx2"] = (await chain.openJob(keyHash, STANDARD, 100)).receipt.transactionHash; // 94: crosses again
  facts["lowTx1"] = low2.receipt.transactionHash;
}, 240_000);

afterAll(async () => {
  await dispatcher?.stop();
  await api?.close();
  await receiver?.close();
  await pool?.end();
});

describe("event delivery", () => {
  it("delivers credit.topup when credits are deposited", async () => {
    const [topup] = await deliveredAtLeast("credit.topup");
    expect(topup?.data).toMatchObject({
      credits_added: 150,
      usdg_value: 1.5,
      credits_remaining: 150,
      payer: wallet.address.toLowerCase(),
    });
    expect(topup?.data["topup_tx"]).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("delivers worker.registered with the worker's address, stake and model ids", async () => {
    const [registered] = await deliveredAtLeast("worker.registered");
    expect(registered?.data).toMatchObject({
      worker_address: worker.address.toLowerCase(),
      stake_svc: 1000,
      models: [STANDARD, MAX],
    });
  });

  it("delivers job.submitted when the escrow is locked", async () => {
    const submitted = await deliveredAtLeast("job.submitted", 6);
    const job1 = facts["job1"] as { jobId: string; receipt: { transactionHash: string; blockNumber: bigint } };
    expect(submitted[0]?.data).toEqual({
      job_id: job1.jobId,
      model: STANDARD,
      tier: "standard",
      credits_locked: 8,
      usdg_value: 0.08,
      escrow_tx: job1.receipt.transactionHash,
      block_number: Number(job1.receipt.blockNumber),
      credits_remaining: 142,
    });
  });

  it("delivers job.processing from the gateway's job table", async () => {
    const [processing] = await deliveredAtLeast("job.processing");
    const job1 = facts["job1"] as { jobId: string };
    expect(processing?.data).toMatchObject({
      job_id: job1.jobId,
      model: STANDARD,
      tier: "standard",
      worker_address: worker.address.toLowerCase(),
    });
    expect(Date.parse(String(processing?.data["started_at"]))).not.toBeNaN();
  });

  it("delivers job.completed with exactly the spec's data fields", async () => {
    const [completed] = await deliveredAtLeast("job.completed");
    const job1 = facts["job1"] as { jobId: string };
    const settled = facts["settled"] as { receipt: { transactionHash: string; blockNumber: bigint } };
    expect(completed?.data).toEqual({
      job_id: job1.jobId,
      model: STANDARD,
      tier: "standard",
      credits_charged: 8,
      usdg_value: 0.08,
      worker_address: worker.address.toLowerCase(),
      settlement_tx: settled.receipt.transactionHash,
      block_number: Number(settled.receipt.blockNumber),
      prompt_tokens: 12,
      completion_tokens: 50,
      credits_remaining: 142,
    });
  });

  it("delivers job.disputed with both hashes and the arbitration deadline", async () => {
    const [disputed] = await deliveredAtLeast("job.disputed");
    const job1 = facts["job1"] as { jobId: string };
    expect(disputed?.data).toMatchObject({
      job_id: job1.jobId,
      worker_address: worker.address.toLowerCase(),
      dispute_tx: facts["disputeTx"],
    });
    expect(disputed?.data["your_hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(disputed?.data["worker_hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(disputed?.data["your_hash"]).not.toBe(disputed?.data["worker_hash"]);
  });

  it("delivers worker.slashed with the spec's data when a dispute is upheld", async () => {
    const [slashed] = await deliveredAtLeast("worker.slashed");
    const job1 = facts["job1"] as { jobId: string };
    expect(slashed?.data).toEqual({
      worker_address: worker.address.toLowerCase(),
      slash_amount_svc: 1000,
      slash_tx: facts["slashTx"],
      reason: "fraudulent_proof",
      related_job_id: job1.jobId,
    });
  });

  it("delivers job.failed when the gateway fails a job", async () => {
    const failed = await deliveredAtLeast("job.failed");
    const job2 = facts["job2"] as { jobId: string };
    expect(failed[0]?.data).toMatchObject({
      job_id: job2.jobId,
      credits_returned: 8,
      usdg_value: 0.08,
      fail_tx: facts["failTx"],
      credits_remaining: 150,
    });
  });

  it("delivers job.timeout when a job is refunded after its deadline", async () => {
    const [timeout] = await deliveredAtLeast("job.timeout");
    const job3 = facts["job3"] as { jobId: string };
    expect(timeout?.data).toMatchObject({
      job_id: job3.jobId,
      credits_refunded: 8,
      usdg_value: 0.08,
      refund_tx: facts["refundTx"],
      credits_remaining: 150,
    });
  });

  it("delivers credit.low once per crossing below the threshold, re-armed when the balance recovers", async () => {
    const lows = await deliveredAtLeast("credit.low", 2);
    await deliveredAtLeast("job.submitted", 7); // everything up to the last job was ingested
    expect(delivered("credit.low").map((e) => e.data)).toEqual([
      { credits_remaining: 70, usdg_value: 0.7, threshold: 100 },
      { credits_remaining: 94, usdg_value: 0.94, threshold: 100 },
    ]);
    expect(lows).toHaveLength(2);
  });

  it("wraps every event in the envelope with a stable evt_ id and the api_version", () => {
    for (const envelope of envelopes()) {
      expect(envelope.id).toMatch(/^evt_[0-9a-f]{32}$/);
      expect(envelope.api_version).toBe("2026-11-01");
      expect(Number.isNaN(Date.parse(envelope.created_at))).toBe(false);
    }
    const ids = envelopes().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("signs every delivery with the webhook's secret (verified independently)", () => {
    expect(receiver.requests.length).toBeGreaterThanOrEqual(EVENT_NAMES.length);
    for (const request of receiver.requests) {
      expect(verifySignature(String(request.headers["service-signature"]), request.rawBody, secret)).toBe(true);
      expect(verifySignature(String(request.headers["service-signature"]), request.rawBody, "whsec_wrong")).toBe(false);
    }
  });

  it("signs every delivery per Standard Webhooks too (the generated secret used as is by the standardwebhooks package)", () => {
    const verifier = new Webhook(secret);
    for (const request of receiver.requests) {
      const headers = {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      };
      expect(verifier.verify(request.rawBody, headers)).toEqual(JSON.parse(request.rawBody));
      expect(headers["webhook-id"]).toBe(request.headers["service-event-id"]);
    }
  });

  it("has delivered every one of the ten event names", async () => {
    await deliveredAtLeast("credit.low", 2);
    expect(new Set(envelopes().map((e) => e.event))).toEqual(new Set(EVENT_NAMES));
  });

  it("sends job.processing once even when the gateway also announces it directly", async () => {
    const job1 = facts["job1"] as { jobId: string };
    const created = await enqueueProcessingEvent(pool, {
      jobId: job1.jobId,
      wallet: wallet.address,
      model: STANDARD,
      tier: "standard",
      workerAddress: worker.address,
      startedAt: new Date(),
    });
    expect(created).toBe(0);
    expect(delivered("job.processing")).toHaveLength(1);
  });

  it("stores no job.processing for a wallet no webhook subscribes to it", async () => {
    const unsubscribed = await chain.wallet(34);
    const processingJob = (owner: LocalAccount, n: number) =>
      insertProcessingJob(pool, { wallet: owner.address, worker: worker.address, model: STANDARD, n });
    const skipped = await processingJob(unsubscribed, 9_001);
    // A later job of the subscribed wallet: once it is delivered, the poll has passed the first one.
    await processingJob(wallet, 9_002);
    await deliveredAtLeast("job.processing", 2);
    const { rows } = await pool.query("SELECT id FROM webhook_event WHERE source = $1", [skipped]);
    expect(rows).toEqual([]);
  });
});
