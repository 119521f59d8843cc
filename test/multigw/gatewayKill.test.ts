import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPortFree } from "../../scripts/stack/ports.js";
import { API_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { escrowBalanceSheet, escrowEvents, openJobsOnChain } from "../support/conservationAudit.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { ATTEMPT_IN_FLIGHT_ERROR } from "../../api/webhooks/runDeliveries.js";
import { verifySignature } from "../webhooks/support/verifySignature.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS } from "./multigwStack.js";

// Issue 17, "several gateways": two gateway processes behind the stack's proxy, one chain, one database. Under a
// few dozen concurrent requests (streamed and not) one gateway is killed with SIGKILL. Then every job ends
// settled, refunded or failed, the escrow's books balance from the chain alone, and the client's receiver got each
// webhook event once, or a second time only for an attempt the killed dispatcher made and never recorded
// (docs/DESIGN.md "Several gateways": at-least-once; receivers deduplicate by `webhook-id`).

const MODEL = "qwen3-1.7b";
const SECRET = "whsec_multigw_receiver_secret_0123456789";
const REQUESTS_BEFORE_KILL = 36;
const REQUESTS_AFTER_KILL = 12;
const FINAL_STATUSES = new Set(["settled", "refunded", "failed"]);

type Outcome = { status: number; stream: boolean; error: string | null };

let client: ClientWallet;
let receiver: http.Server;
/**
 * Every delivery the client's receiver (a test double: outside the product) acknowledged, by event id, with the
 * attempt number of each (`service-delivery-attempt`).
 */
const deliveries = new Map<string, { count: number; signed: boolean; event: string; attempts: number[] }>();
let db: pg.Client;

beforeAll(async () => {
  client = await createClientWallet({ usdg: 20n });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const envelope = JSON.parse(body) as { id: string; event: string };
      const signed = verifySignature(String(req.headers["service-signature"] ?? ""), body, SECRET);
      const seen = deliveries.get(envelope.id);
      const attempt = Number(req.headers["service-delivery-attempt"]);
      deliveries.set(envelope.id, {
        count: (seen?.count ?? 0) + 1,
        signed,
        event: envelope.event,
        attempts: [...(seen?.attempts ?? []), attempt],
      });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  db = new pg.Client({ connectionString: stackInfo().databaseUrl });
  await db.connect();
});

afterAll(async () => {
  receiver.close();
  await db.end();
});

/** One completion as a client sends it through the proxy; a cut connection is status 0. */
async function complete(stream: boolean): Promise<Outcome> {
  try {
    const response = await fetch(`${stackInfo().apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: "user", content: "Tell a short story." }],
        max_tokens: 40,
        stream,
      }),
      signal: AbortSignal.timeout(60_000),
    });
    await response.text();
    return { status: response.status, stream, error: null };
  } catch (error) {
    return { status: 0, stream, error: (error as Error).name };
  }
}

async function walletJobs(): Promise<
  { job_id: string; status: string; gateway_id: string | null; error: string | null }[]
> {
  const { rows } = await db.query<{ job_id: string; status: string; gateway_id: string | null; error: string | null }>(
    `SELECT job_id, status, gateway_id, error FROM ${API_SCHEMA}.gateway_job WHERE wallet = $1`,
    [client.wallet.toLowerCase()],
  );
  return rows;
}

describe("two gateways under load, one killed with SIGKILL", () => {
  it("every job ends closed, the books balance and each webhook event is delivered, twice only after a lost attempt", async () => {
    const { gateways } = stackInfo();
    expect(gateways.length).toBe(2);
    const [survivor, victim] = gateways as [(typeof gateways)[0], (typeof gateways)[0]];
    const port = (receiver.address() as AddressInfo).port;
    const created = await fetch(`${stackInfo().apiUrl}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        url: `http://127.0.0.1:${port}/hook`,
        events: ["job.submitted", "job.processing", "job.completed", "job.failed", "job.timeout"],
        secret: SECRET,
      }),
    });
    expect(created.status).toBe(201);
    const webhookId = ((await created.json()) as { id: string }).id;

    const inFlight: Promise<Outcome>[] = [];
    for (let i = 0; i < REQUESTS_BEFORE_KILL; i++) {
      inFlight.push(complete(i % 2 === 0));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // Kill the second gateway while it is serving: some of its jobs are being streamed by workers.
    await waitFor(
      "the victim gateway is running jobs",
      async () =>
        (await walletJobs()).filter((job) => job.gateway_id === victim.gatewayId && !FINAL_STATUSES.has(job.status))
          .length >= 3,
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    process.kill(-victim.pid, "SIGKILL");
    const killedAt = Date.now();
    const openAtKill = (await walletJobs()).filter(
      (job) => job.gateway_id === victim.gatewayId && !FINAL_STATUSES.has(job.status),
    );
    // Once the victim's port refuses connections, the proxy sends every new request to the survivor.
    const victimPort = Number(new URL(victim.apiUrl).port);
    await waitFor("the victim's port is closed", () => isPortFree(victimPort), { timeoutMs: 10_000, intervalMs: 20 });
    const afterKill = await Promise.all(Array.from({ length: REQUESTS_AFTER_KILL }, (_, i) => complete(i % 2 === 0)));
    expect(afterKill.map((o) => o.status)).toEqual(afterKill.map(() => 200));
    const outcomes = [...(await Promise.all(inFlight)), ...afterKill];
    // A client of the killed gateway gets a cut stream or the proxy's retryable 503, never another 5xx.
    expect(outcomes.filter((o) => o.status >= 500 && o.status !== 503)).toEqual([]);

    // No job stays open: the survivor takes over the victim's jobs once its lease expires.
    await waitFor(
      "every job of the wallet is settled, refunded or failed",
      async () => (await walletJobs()).every((job) => FINAL_STATUSES.has(job.status)),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const closedMs = Date.now() - killedAt;
    // A job open on chain whose row exists is closed by its gateway (or the survivor) within seconds of the row.
    const rowKeys = async () =>
      new Set(
        (await db.query<{ job_key: string }>(`SELECT job_key FROM ${API_SCHEMA}.gateway_job`)).rows.map((row) =>
          row.job_key.toLowerCase(),
        ),
      );
    const openWithRow = async () => {
      const keys = await rowKeys();
      return (await openJobsOnChain()).filter((jobKey) => keys.has(jobKey.toLowerCase()));
    };
    await waitFor(
      "every job opened on chain that has a row is closed",
      async () => (await openWithRow()).length === 0,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
      },
    );
    // A lock the victim signed and sent before its row's insert committed (openEscrow.ts: the two are written side by
    // side) has no row for anyone to close: the survivor's sweep fails it back once it is ORPHAN_LOCK_GRACE_MS old
    // (the victim's signer is in gateway_lease; sweepJobs.ts returnOrphanLocks), and refunds it after the chain
    // deadline had that not happened: either way within the escrow's job timeout of the kill.
    const rowlessAtClose = (await openJobsOnChain()).length;
    await waitFor("every job opened on chain is closed", async () => (await openJobsOnChain()).length === 0, {
      timeoutMs: MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS * 1000 + 30_000 - (Date.now() - killedAt),
      intervalMs: 250,
    });
    const jobs = await walletJobs();
    const orphans = jobs.filter((job) => openAtKill.some((open) => open.job_id === job.job_id));
    expect(orphans.length).toBe(openAtKill.length);
    expect(orphans.every((job) => job.gateway_id === survivor.gatewayId)).toBe(true);

    // Conservation from the chain alone: what the escrow holds is what it owes.
    const sheet = await escrowBalanceSheet();
    expect(sheet.held).toBe(sheet.owed);
    expect(sheet.credits).toBe(sheet.creditsOutstanding);

    // No job closed twice on chain.
    const closings = (
      await Promise.all((["JobSettled", "JobFailed", "JobRefunded"] as const).map((name) => escrowEvents(name)))
    )
      .flat()
      .map((event) => event.args.jobId);
    expect(new Set(closings).size).toBe(closings.length);

    // Each event owed to the webhook reached the receiver (two dispatchers, one of them killed).
    const expectedEvents = async () =>
      (
        await db.query<{ event_id: string }>(
          `SELECT event_id FROM ${API_SCHEMA}.webhook_delivery WHERE webhook_id = $1`,
          [webhookId],
        )
      ).rows.map((row) => row.event_id);
    await waitFor(
      "every recorded event delivered",
      async () => (await expectedEvents()).every((id) => deliveries.has(id)),
      // A delivery the killed dispatcher had claimed waits out its lease (WEBHOOK_TIMEOUT_MS + 30 s).
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // Late duplicates would arrive within a few retry periods.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const events = await expectedEvents();
    // Once each, except that an attempt the killed dispatcher made and never recorded the outcome of is made again,
    // under the next attempt number, once its lease expires (runDeliveries.ts: an attempt is counted, with a row
    // marked in flight, before anything is sent). So: no attempt number reached the receiver twice, and every attempt
    // it got is either a recorded success or one still marked in flight (only a dead dispatcher leaves one; the
    // survivor's resend may still wait out the lease when this runs).
    const recorded = await db.query<{ event_id: string; attempt_number: number; ok: boolean; error: string | null }>(
      `SELECT d.event_id, a.attempt_number, a.ok, a.error FROM ${API_SCHEMA}.webhook_attempt a
       JOIN ${API_SCHEMA}.webhook_delivery d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
      [webhookId],
    );
    const unexplained = events.flatMap((id) => {
      const attempts = deliveries.get(id)?.attempts ?? [];
      const rows = recorded.rows.filter((row) => row.event_id === id);
      const explained = (attempt: number) =>
        rows.some((row) => row.attempt_number === attempt && (row.ok || row.error === ATTEMPT_IN_FLIGHT_ERROR));
      const fine =
        attempts.length >= 1 &&
        new Set(attempts).size === attempts.length &&
        rows.filter((row) => row.ok).length <= 1 &&
        attempts.every(explained);
      return fine ? [] : [{ id, attempts, rows }];
    });
    expect(unexplained).toEqual([]);
    const repeated = events.filter((id) => (deliveries.get(id)?.count ?? 0) > 1).length;
    expect([...deliveries.values()].every((delivery) => delivery.signed)).toBe(true);
    // Every lock and every close on chain was announced once, under its own event name.
    const mine = async (name: "JobOpened" | "JobSettled" | "JobFailed" | "JobRefunded") =>
      (await escrowEvents(name)).filter((event) => event.args.wallet?.toLowerCase() === client.wallet.toLowerCase())
        .length;
    const announced = (event: string) => [...deliveries.values()].filter((d) => d.event === event).length;
    expect(announced("job.submitted")).toBe(await mine("JobOpened"));
    expect(announced("job.completed")).toBe(await mine("JobSettled"));
    expect(announced("job.failed")).toBe(await mine("JobFailed"));
    expect(announced("job.timeout")).toBe(await mine("JobRefunded"));

    const byStatus = (statuses: string[]) =>
      Object.fromEntries([...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length]));
    console.log(
      `[multigw] ${JSON.stringify({
        requests: outcomes.length,
        answers: byStatus(outcomes.map((o) => String(o.status))),
        jobs: byStatus(jobs.map((job) => job.status)),
        openOnVictimAtKill: openAtKill.length,
        closedAfterKillMs: closedMs,
        openOnChainWithoutRow: rowlessAtClose,
        webhookEvents: events.length,
        sentAgainAfterKill: repeated,
      })}`,
    );
    // Its waits are bounded one by one: the lease, the chain's job timeout, a webhook delivery's lease.
  }, 300_000);
});
