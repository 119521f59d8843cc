import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32, newJobId } from "@credit-metered/client";
import { createPool } from "../../api/db/createPool.js";
import { JobStore } from "../../api/jobs/jobStore.js";
import { API_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { keccak256, toBytes } from "viem";
import { escrowEvents } from "../support/conservationAudit.js";
import { stackInfo } from "../support/stackInfo.js";
import { verifySignature } from "../webhooks/support/verifySignature.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { call, completionBody } from "./support/clientLoad.js";
import {
  crash,
  expectConserved,
  gatewayGauge,
  openGatewayRows,
  pidOf,
  report,
  restartGateway,
  restartWorker,
} from "./support/faults.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Issue 12: processes die (SIGKILL) with work in flight — a worker mid-stream, the gateway with streams open, the
// gateway again while its webhook dispatcher owes deliveries to a receiver that is failing. Each is followed by
// the conservation audit; recovery is measured.

const MODEL = "qwen3-1.7b";

let client: ClientWallet;

beforeAll(async () => {
  client = await createClientWallet({ usdg: 10n });
});

/** Opens a stream and resolves once its first content chunk arrived (job id and worker from the headers). */
async function openStream(apiKey: string): Promise<{
  jobId: string;
  worker: string;
  rest: Promise<{ text: string; cut: boolean }>;
}> {
  const response = await fetch(`${stackInfo().apiUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ ...completionBody(MODEL, "Tell a long story."), max_tokens: 40, stream: true }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes('"content"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { text, cut: false };
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return { text, cut: true };
    }
  })();
  return { jobId: response.headers.get("x-service-job-id")!, worker: response.headers.get("x-service-worker")!, rest };
}

async function closedOnChain(jobId: string): Promise<"settled" | "failed" | "refunded" | "open"> {
  const key = jobIdToBytes32(jobId);
  for (const [name, status] of [
    ["JobSettled", "settled"],
    ["JobFailed", "failed"],
    ["JobRefunded", "refunded"],
  ] as const) {
    if ((await escrowEvents(name)).some((event) => event.args.jobId === key)) return status;
  }
  return "open";
}

describe("a worker SIGKILLed mid-stream", () => {
  it("the client gets an error event and [DONE], the escrow goes back, credits conserved", async () => {
    const stream = await openStream(client.apiKey);
    const index = stackInfo().workers.findIndex(
      (worker) => worker.address.toLowerCase() === stream.worker.toLowerCase(),
    );
    expect(index).toBeGreaterThanOrEqual(0);
    const killedAt = Date.now();
    await crash(`worker${index}`, stackInfo().ports.workerBase + index);
    const { text } = await stream.rest;
    expect(text).toContain('"error"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    await waitFor("the job closed on chain", async () => (await closedOnChain(stream.jobId)) !== "open", {
      timeoutMs: 30_000,
    });
    const closedMs = Date.now() - killedAt;
    const outcome = await closedOnChain(stream.jobId);
    expect(["failed", "settled"]).toContain(outcome);
    await restartWorker(index);
    const audit = await expectConserved();
    report("worker SIGKILL mid-stream", { client: "SSE error event + [DONE]", onChain: outcome, closedMs, audit });
  });
});

describe("the gateway SIGKILLed with streams in flight, then restarted", () => {
  it("recovery closes every job it left open (settled or refunded); the open-escrow metric and rows agree", async () => {
    const streams = await Promise.all([0, 1, 2, 3].map(() => openStream(client.apiKey)));
    await crash("gateway", stackInfo().ports.api);
    const crashedAt = Date.now();
    const cuts = await Promise.all(streams.map((stream) => stream.rest));
    // Clients saw their streams cut (no [DONE]).
    expect(cuts.every(({ text }) => !text.trimEnd().endsWith("data: [DONE]"))).toBe(true);
    await restartGateway();
    const restartedMs = Date.now() - crashedAt;
    await waitFor(
      "every job the crash left open is closed on chain",
      async () => (await Promise.all(streams.map((stream) => closedOnChain(stream.jobId)))).every((s) => s !== "open"),
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const recoveredMs = Date.now() - crashedAt;
    const outcomes = await Promise.all(streams.map((stream) => closedOnChain(stream.jobId)));
    await waitFor("no gateway row left open", async () => (await openGatewayRows()).length === 0, {
      timeoutMs: 30_000,
    });
    await waitFor(
      "the open-escrow metric shows nothing open",
      async () =>
        ((await gatewayGauge('gateway_open_escrows{status="pending"}')) ?? 0) +
          ((await gatewayGauge('gateway_open_escrows{status="processing"}')) ?? 0) +
          ((await gatewayGauge('gateway_open_escrows{status="settling"}')) ?? 0) ===
        0,
      { timeoutMs: 10_000 },
    );
    const audit = await expectConserved();
    report("gateway SIGKILL with 4 streams in flight", {
      clients: "4 streams cut without [DONE]",
      onChain: outcomes,
      restartedMs,
      allClosedAfterCrashMs: recoveredMs,
      audit,
    });
  });
});

describe("a webhook receiver failing, then recovering, across a dispatcher crash", () => {
  let receiver: http.Server;
  let failing = true;
  const received: { eventId: string; attempt: string; ok: boolean; signed: boolean }[] = [];
  const SECRET = "whsec_chaos_receiver_secret_0123456789";

  beforeAll(async () => {
    // The client's receiver (a test double: outside the product): 500 while `failing`, then 200.
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const signed = verifySignature(String(req.headers["service-signature"] ?? ""), body, SECRET);
        const eventId = (JSON.parse(body) as { id: string }).id;
        received.push({ eventId, attempt: String(req.headers["service-delivery-attempt"]), ok: !failing, signed });
        res.statusCode = failing ? 500 : 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  });

  afterAll(() => {
    receiver.close();
  });

  it("every job.completed event is delivered with a valid signature once the receiver recovers", async () => {
    const port = (receiver.address() as AddressInfo).port;
    const created = await call("POST", "/v1/webhooks", client.apiKey, {
      url: `http://127.0.0.1:${port}/hook`,
      events: ["job.completed"],
      secret: SECRET,
    });
    expect(created.status).toBe(201);
    const since = await escrowEvents("JobSettled").then((events) => events.length);
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call("POST", "/v1/chat/completions", client.apiKey, completionBody(MODEL));
      expect(answer.status).toBe(200);
      jobIds.push(answer.headers!.get("x-service-job-id")!);
    }
    // Expected from the chain alone: a JobSettled for each of the three jobs of this wallet.
    await waitFor("three settlements on chain", async () => (await escrowEvents("JobSettled")).length >= since + 3);
    const expectedSettled = (await escrowEvents("JobSettled")).filter(
      (event) =>
        event.args.wallet?.toLowerCase() === (client.wallet.toLowerCase() as Address) &&
        jobIds.map((id) => jobIdToBytes32(id)).includes(event.args.jobId!),
    ).length;
    expect(expectedSettled).toBe(3);
    // The receiver has refused some attempts; then the dispatcher dies (inside the gateway) and comes back.
    await waitFor("failed attempts reached the receiver", async () => received.filter((r) => !r.ok).length >= 3, {
      timeoutMs: 30_000,
    });
    await crash("gateway", stackInfo().ports.api);
    failing = false;
    const crashedAt = Date.now();
    await restartGateway();
    await waitFor(
      "every expected event delivered",
      async () => new Set(received.filter((r) => r.ok).map((r) => r.eventId)).size >= expectedSettled,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const deliveredMs = Date.now() - crashedAt;
    const delivered = received.filter((r) => r.ok);
    expect(delivered.every((r) => r.signed)).toBe(true);
    expect(new Set(delivered.map((r) => r.eventId)).size).toBe(expectedSettled);
    // Each event is acknowledged once: a delivered event is not sent again.
    await sleep(3_000);
    expect(received.filter((r) => r.ok).length).toBe(expectedSettled);
    const audit = await expectConserved();
    report("webhook receiver failing across a dispatcher crash", {
      expectedEvents: expectedSettled,
      deliveredEvents: new Set(delivered.map((r) => r.eventId)).size,
      failedAttemptsBeforeCrash: received.filter((r) => !r.ok).length,
      attemptHeadersOnSuccess: delivered.map((r) => r.attempt),
      deliveredAfterCrashMs: deliveredMs,
      audit,
    });
    expect(pidOf("gateway")).toBeGreaterThan(0);
  });
});

describe("a gateway that crashed between writing a job's row and sending its escrow", () => {
  it("leaves a row the sweeper fails within ESCROW_UNSENT_GRACE_MS, never counted as an open escrow", async () => {
    // The state such a crash leaves: the row openEscrow writes first (by the product's own JobStore), no escrow
    // transaction, and no process running the job.
    const pool = createPool(stackInfo().databaseUrl, API_SCHEMA, 1);
    const jobId = newJobId(Date.now());
    try {
      await new JobStore(pool).insert({
        jobId,
        jobKey: jobIdToBytes32(jobId),
        wallet: client.wallet,
        keyHash: keccak256(toBytes(client.apiKey)),
        model: MODEL,
        tier: "lite",
        stream: false,
        maxTokens: 8,
        creditsLocked: 2,
        promptTokens: 5,
      });
    } finally {
      await pool.end();
    }
    const writtenAt = Date.now();
    expect((await openGatewayRows()).map((row) => row.job_id)).toContain(jobId);
    // Nothing is locked on chain for it, and the metric agrees.
    expect((await gatewayGauge('gateway_open_escrows{status="pending"}')) ?? 0).toBe(0);
    await waitFor(
      "the unsent row is failed",
      async () => !(await openGatewayRows()).some((row) => row.job_id === jobId),
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const closedMs = Date.now() - writtenAt;
    const audit = await expectConserved();
    report("row left by a crash before the escrow was sent", { closedMs, audit });
  });
});
