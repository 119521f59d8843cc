import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { indexNotifyChannel } from "../../api/webhooks/startDispatcher.js";
import type { IndexTableListener } from "../../api/readModel/indexTables.js";
import { webhookFixture, type WebhookFixture } from "./support/webhookFixture.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// How long from a mined block to the first delivery attempt of the event it carries: Hardhat automine →
// Ponder (100 ms polling) → dispatcher (100 ms polling of the index) → HTTPS POST. Printed, and bounded loosely.

const stack = inject("webhookStack");
const SAMPLES = 20;
let fixture: WebhookFixture;

beforeAll(async () => {
  fixture = await webhookFixture(stack, { name: "latency", walletIndex: 25, receiverPort: 8778 });
  fixture.startDispatcher();
});

afterAll(async () => {
  await fixture?.close();
});

/** A dispatcher that polls the index once a minute: only the index's notifications bring events in quickly. */
function startNotifiedDispatcher(fixture: WebhookFixture, indexTables?: IndexTableListener): void {
  fixture.startDispatcher({
    indexChannel: indexNotifyChannel(stack.indexSchema),
    ingestIntervalMs: 60_000,
    ingestFallbackMs: 60_000,
    ...(indexTables ? { indexTables } : {}),
  });
}

/** The LISTEN connections on the index's channel other than the asking one (the dispatchers'). */
async function indexListeners(fixture: WebhookFixture): Promise<number[]> {
  const { rows } = await fixture.pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %live_query%' AND pid <> pg_backend_pid()",
  );
  return rows.map((row) => row.pid);
}

/** A deposit's event is delivered within seconds (after the dispatcher's own rounds have run: a notification's doing). */
async function expectDepositDeliveredSoon(fixture: WebhookFixture): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const receipt = await fixture.chain.deposit(fixture.wallet, 100n);
  const tx = receipt.transactionHash.toLowerCase();
  await waitFor(
    `delivery of ${tx} woken by the index`,
    async () => fixture.receiver.requests.some((request) => request.rawBody.includes(tx)),
    { timeoutMs: 10_000 },
  );
}

describe("latency", () => {
  it("measures the median time from a mined block to the first delivery attempt", async () => {
    const latencies: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const receipt = await fixture.chain.deposit(fixture.wallet, 100n);
      const tx = receipt.transactionHash.toLowerCase();
      const minedAt = fixture.chain.minedAt.get(tx);
      if (minedAt === undefined) throw new Error("no mined time");
      const startedAt = await waitFor(`delivery of ${tx}`, async () => {
        const { rows } = await fixture.pool.query<{ started_at: Date }>(
          `SELECT a.started_at FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
           JOIN webhook_event e ON e.id = d.event_id
           WHERE a.attempt_number = 1 AND e.event = 'credit.topup' AND e.body::jsonb -> 'data' ->> 'topup_tx' = $1`,
          [tx],
        );
        return rows[0]?.started_at;
      });
      latencies.push(startedAt.getTime() - minedAt);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const median = (sorted[SAMPLES / 2 - 1]! + sorted[SAMPLES / 2]!) / 2;
    const p90 = sorted[Math.ceil(SAMPLES * 0.9) - 1]!;
    console.log(
      `[webhooks] block → first delivery attempt over ${SAMPLES} deposits: median ${median} ms, p90 ${p90} ms, ` +
        `min ${sorted[0]} ms, max ${sorted.at(-1)} ms (first sample ${latencies[0]} ms: cold dispatcher)`,
    );
    expect(median).toBeLessThan(2_000);
  });

  it("a dispatcher that polls the index once a minute still delivers at once: each indexed block wakes it", async () => {
    const woken = await webhookFixture(stack, { name: "latency_notify", walletIndex: 33, receiverPort: 8784 });
    try {
      startNotifiedDispatcher(woken);
      // Its first round runs at start; it is over before the deposit.
      await expectDepositDeliveredSoon(woken);
    } finally {
      await woken.close();
    }
  });

  it("a dispatcher whose LISTEN connection was cut listens again: a later block still wakes it", async () => {
    const woken = await webhookFixture(stack, { name: "latency_relisten", walletIndex: 34, receiverPort: 8785 });
    try {
      startNotifiedDispatcher(woken);
      const listeners = () => indexListeners(woken);
      const cut = await waitFor("the dispatcher's LISTEN connection", async () => {
        const pids = await listeners();
        return pids.length > 0 ? pids : undefined;
      });
      await woken.pool.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS t(pid)", [cut]);
      await waitFor("a new LISTEN connection", async () => (await listeners()).some((pid) => !cut.includes(pid)), {
        timeoutMs: 10_000,
      });
      // Its round after listening again is over before the deposit.
      await expectDepositDeliveredSoon(woken);
    } finally {
      await woken.close();
    }
  });

  it("tells a listener of the index's tables what each block wrote, and when its notifications stop and resume", async () => {
    const heard = await webhookFixture(stack, { name: "latency_tables", walletIndex: 37, receiverPort: 8787 });
    const calls: (boolean | readonly string[] | undefined)[] = [];
    try {
      startNotifiedDispatcher(heard, {
        listening: (up) => calls.push(up),
        changed: (tables) => calls.push(tables),
      });
      await waitFor("the dispatcher to listen", async () => calls.includes(true));
      await heard.chain.deposit(heard.wallet, 100n);
      // A deposit's block writes the wallet's account row (indexer/src/write/account.ts) and its chain event.
      await waitFor("the deposit's block announced", async () =>
        calls.some((call) => Array.isArray(call) && call.includes("account") && call.includes("chain_event")),
      );
      const cut = await waitFor("the dispatcher's LISTEN connection", async () => {
        const pids = await indexListeners(heard);
        return pids.length > 0 ? pids : undefined;
      });
      const before = calls.length;
      await heard.pool.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS t(pid)", [cut]);
      await waitFor(
        "the lost connection heard, then a new one",
        async () => {
          const after = calls.slice(before);
          return after.includes(false) && after.indexOf(true, after.indexOf(false)) > 0;
        },
        { timeoutMs: 10_000 },
      );
    } finally {
      await heard.close();
    }
    expect(calls.at(-1)).toBe(false);
  });
});
