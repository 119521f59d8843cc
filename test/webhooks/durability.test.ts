import path from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { startDispatcherProcess, type DispatcherProcess } from "./support/dispatcherProcess.js";
import { indexed } from "./support/startWebhookStack.js";
import { attemptsOf, deliveriesOf, webhookFixture, type WebhookFixture } from "./support/webhookFixture.js";
import { ATTEMPT_IN_FLIGHT_ERROR } from "../../api/webhooks/runDeliveries.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Dispatchers as real processes sharing one database: a crash loses nothing and re-sends nothing that was
// acknowledged; two at once never send the same delivery twice (SKIP LOCKED claims + leases).

const stack = inject("webhookStack");
let fixture: WebhookFixture | undefined;
const processes: DispatcherProcess[] = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop()));
  await fixture?.close();
  fixture = undefined;
});

/** `count` deposits by the fixture's wallet, each a credit.topup event; waits until they are indexed. */
async function depositMany(f: WebhookFixture, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await f.chain.deposit(f.wallet, 100n);
  await indexed(stack, await f.chain.publicClient.getBlockNumber());
}

/** Waits until the fixture's webhook has `count` deliveries, all delivered, and a little longer for any stray re-send. */
async function allDelivered(f: WebhookFixture, count: number): Promise<void> {
  await waitFor(
    "all delivered",
    async () => {
      const deliveries = await deliveriesOf(f.pool, f.webhookId);
      return deliveries.length === count && deliveries.every((d) => d.status === "delivered");
    },
    { timeoutMs: 60_000 },
  );
  await sleep(500);
}

function eventIdsReceived(f: WebhookFixture): string[] {
  return f.receiver.requests.map((r) => String(r.headers["service-event-id"]));
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

const spawn = async (f: WebhookFixture, name: string, env: Record<string, string> = {}) => {
  const p = await startDispatcherProcess({
    name,
    databaseUrl: stack.databaseUrl,
    schema: f.schema,
    indexerUrl: stack.indexerUrl,
    caFile: f.cert.certFile,
    logFile: path.join(stack.stateDir, `${name}.log`),
    env,
  });
  processes.push(p);
  return p;
};

describe("durability", () => {
  it("a dispatcher killed mid-run and restarted loses nothing and re-sends nothing acknowledged", async () => {
    const events = 25;
    fixture = await webhookFixture(stack, { name: "crash", walletIndex: 18, receiverPort: 8775 });
    const f = fixture;
    f.receiver.setBehaviour(() => ({ status: 200, delayMs: 150 }));
    await depositMany(f, events);

    const first = await spawn(f, "crash-a", { WEBHOOK_DISPATCH_BATCH: "3" });
    await waitFor("some deliveries made", () => f.receiver.requests.length >= 8, { intervalMs: 20 });
    await first.kill();
    processes.splice(processes.indexOf(first), 1);
    const acknowledged = (await deliveriesOf(f.pool, f.webhookId))
      .filter((d) => d.status === "delivered")
      .map((d) => d.event_id);
    const receivedBeforeRestart = f.receiver.requests.length;
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeLessThan(events);

    await spawn(f, "crash-b", { WEBHOOK_DISPATCH_BATCH: "3" });
    await allDelivered(f, events);

    const counts = countBy(eventIdsReceived(f));
    expect(counts.size).toBe(events); // nothing lost
    for (const eventId of acknowledged) expect(counts.get(eventId)).toBe(1); // nothing acknowledged re-sent
    const resent = [...counts.values()].filter((n) => n > 1).length;
    console.log(
      `[webhooks] crash test: ${acknowledged.length}/${events} acknowledged before SIGKILL, ` +
        `${receivedBeforeRestart} requests received by then, ${resent} unacknowledged in-flight deliveries re-sent after restart`,
    );
  });

  it("two dispatchers running at once never send a delivery twice", async () => {
    const events = 40;
    fixture = await webhookFixture(stack, { name: "pair", walletIndex: 19, receiverPort: 8776 });
    const f = fixture;
    // The first answer is held for 1.5 s (within the 2 s timeout), so whichever dispatcher sent it is busy while the
    // other, already running, must take work: both share it however their start-up times differ under load.
    f.receiver.setBehaviour(({ index }) => ({ status: 200, delayMs: index === 0 ? 1_500 : 30 }));
    await Promise.all([
      spawn(f, "pair-a", { WEBHOOK_DISPATCH_BATCH: "2" }),
      spawn(f, "pair-b", { WEBHOOK_DISPATCH_BATCH: "2" }),
    ]);
    await depositMany(f, events);
    await allDelivered(f, events);

    const counts = countBy(eventIdsReceived(f));
    expect(counts.size).toBe(events);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const attempts = await attemptsOf(f.pool, f.webhookId);
    expect(attempts).toHaveLength(events);
    const byDispatcher = countBy(attempts.map((a) => a.dispatcher ?? "?"));
    expect([...byDispatcher.keys()].sort()).toEqual(["pair-a", "pair-b"]);
    console.log(`[webhooks] two dispatchers: ${JSON.stringify(Object.fromEntries(byDispatcher))}`);
  });

  // Issue 12 item 6: the attempt is counted (durably) before it is sent.
  it("a delivery re-sent after a dispatcher crash carries the next Service-Delivery-Attempt, never 1 again", async () => {
    fixture = await webhookFixture(stack, { name: "attempt_count", walletIndex: 31, receiverPort: 8782 });
    const f = fixture;
    // The first request is held unanswered, so the dispatcher dies with the attempt in flight.
    f.receiver.setBehaviour(({ index }) => (index === 0 ? { status: 200, delayMs: 8_000 } : { status: 200 }));
    await depositMany(f, 1);
    const timing = { WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_LEASE_MS: "5500" };
    const first = await spawn(f, "count-a", timing);
    await waitFor("first attempt received", () => f.receiver.requests.length >= 1);
    await first.kill();
    processes.splice(processes.indexOf(first), 1);

    await spawn(f, "count-b", timing);
    await waitFor("delivered", async () => (await deliveriesOf(f.pool, f.webhookId))[0]?.status === "delivered", {
      timeoutMs: 30_000,
    });
    expect(f.receiver.requests.map((r) => r.headers["service-delivery-attempt"])).toEqual(["1", "2"]);
    const attempts = await attemptsOf(f.pool, f.webhookId);
    expect(attempts.map((a) => [a.attempt_number, a.ok, a.error, a.dispatcher])).toEqual([
      [1, false, ATTEMPT_IN_FLIGHT_ERROR, "count-a"],
      [2, true, null, "count-b"],
    ]);
  });
});
