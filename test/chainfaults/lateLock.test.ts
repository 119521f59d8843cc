import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { API_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";
import { expectConserved, report } from "../chaos/support/faults.js";
import { stackInfo } from "../support/stackInfo.js";
import { chainStatusOf, rpc } from "./chainRpc.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";
import { FINALITY_DEPTH } from "./chainfaultsStack.js";

// Issue 25, "a job answered as an error is never locked later (or its late lock is returned at once, without
// announcing a submission the client never saw)": a lock held in the mempool by a fee spike above the gateway's
// cap lands after its request was answered as an error (here: the client hung up before the first token). The
// gateway returns it at once (failJob, not a refund at the chain deadline), the wallet is charged nothing, and the
// webhook events hold job.failed for it but never job.submitted.

const SPIKE_BASE_FEE = `0x${(1_000n * 10n ** 9n).toString(16)}`;
const NORMAL_BASE_FEE = "0x3b9aca00";
/** The job timeout of this suite's gateway (chainfaultsStack.ts): a late lock must be returned well before it. */
const RETURNED_WITHIN_MS = 15_000;

let client: ClientWallet;
let model: string;

async function jobsOfClient(): Promise<{ id: string; status: string; credits_charged: number | null }[]> {
  const response = await fetch(`${stackInfo().apiUrl}/v1/jobs?limit=100`, {
    headers: { authorization: `Bearer ${client.apiKey}` },
    signal: AbortSignal.timeout(5_000),
  });
  return ((await response.json()) as { data: { id: string; status: string; credits_charged: number | null }[] }).data;
}

/** The webhook events the gateway recorded for a job (whether or not anyone subscribed). */
async function eventsOfJob(jobId: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: stackInfo().databaseUrl });
  await db.connect();
  try {
    const rows = await db.query<{ event: string; body: string }>(
      `SELECT event, body FROM ${API_SCHEMA}.webhook_event ORDER BY created_at`,
    );
    return rows.rows
      .filter((row) => (JSON.parse(row.body) as { data: { job_id?: string } }).data.job_id === jobId)
      .map((row) => row.event);
  } finally {
    await db.end();
  }
}

beforeAll(async () => {
  client = await createClientWallet({ usdg: 5n });
  model = await claimCatalogModel("late-lock", { tier: "lite" });
  // A worker slow to its first token, so the client can hang up while the job waits at it.
  await startExtraWorker(
    { models: [model], ttftMs: 5_000, tokensPerSecond: 40, minOutputTokens: 4, maxOutputTokens: 4 },
    client.apiKey,
  );
}, 120_000);

describe("a lock that lands after its request was answered as an error", () => {
  it("is returned at once, charges nothing, and announces job.failed but never job.submitted", async () => {
    const known = new Set((await jobsOfClient()).map((job) => job.id));
    await rpc("hardhat_setNextBlockBaseFeePerGas", [SPIKE_BASE_FEE]);
    const hangUp = new AbortController();
    const request = fetch(`${stackInfo().apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "Say something." }], stream: true }),
      signal: hangUp.signal,
    }).catch(() => undefined);
    // The job exists once its escrow is opened (the lock sent, stuck below the spiked base fee); hang up then.
    const jobId = await waitFor(
      "the request's job",
      async () => (await jobsOfClient()).find((job) => !known.has(job.id))?.id,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    hangUp.abort();
    await request;
    await waitFor("the job answered as an error", async () => {
      const job = (await jobsOfClient()).find((candidate) => candidate.id === jobId);
      return job?.status === "failed" || job?.status === "refunded";
    });
    const chainWhileStuck = await chainStatusOf(jobId);
    // The fee falls: the stuck lock is mined now, after the answer.
    await rpc("hardhat_setNextBlockBaseFeePerGas", [NORMAL_BASE_FEE]);
    const feeFellAt = Date.now();
    await waitFor(
      "the late lock mined and returned",
      async () => ["failed", "refunded"].includes(await chainStatusOf(jobId)),
      { timeoutMs: RETURNED_WITHIN_MS, intervalMs: 200 },
    );
    const returnedAfterMs = Date.now() - feeFellAt;
    // job.failed is announced once the return is FINALITY_DEPTH blocks deep (one block a second).
    await waitFor("job.failed recorded", async () => (await eventsOfJob(jobId)).includes("job.failed"), {
      timeoutMs: (FINALITY_DEPTH + 10) * 1_000,
      intervalMs: 500,
    });
    await sleep(2_000);
    const events = await eventsOfJob(jobId);
    const job = (await jobsOfClient()).find((candidate) => candidate.id === jobId);
    report("lock mined after an error answer", { chainWhileStuck, returnedAfterMs, events });
    expect(chainWhileStuck, "the lock was still in the mempool when the client was answered").toBe("none");
    expect(events).not.toContain("job.submitted");
    expect(job?.credits_charged ?? 0).toBe(0);
    await expectConserved();
  });
});
