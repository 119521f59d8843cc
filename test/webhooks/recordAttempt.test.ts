import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { eventIdFor } from "../../api/webhooks/eventId.js";
import { inTransaction, recordEvents } from "../../api/webhooks/recordEvent.js";
import {
  claimDueDeliveries,
  recordAttempt,
  type Claimed,
  type DeliveryRunOptions,
} from "../../api/webhooks/runDeliveries.js";
import type { AttemptOutcome } from "../../api/webhooks/sendDelivery.js";
import { insertWebhook } from "../../api/webhooks/webhookStore.js";
import { freshGatewaySchema } from "./support/startWebhookStack.js";

// Issue 26: an attempt's outcome is recorded by one statement (before: a transaction of five), with the rules of
// "Delivery and retries": delivered; due again after the schedule's delay; after the fifth failed attempt of the
// series failed, the webhook failed and its other pending deliveries held; only the lease holder moves a delivery.

const stack = inject("webhookStack");
const WALLET = "0x0000000000000000000000000000000000000a26";
const RUN: DeliveryRunOptions = {
  retryScheduleMs: [0, 60_000, 60_000, 60_000, 60_000],
  leaseMs: 60_000,
  owner: "dispatcher-a",
  batchSize: 1,
};
const FAILED: AttemptOutcome = { ok: false, statusCode: 503, responseSnippet: "down", error: null, durationMs: 3 };
const OK: AttemptOutcome = { ok: true, statusCode: 200, responseSnippet: "ok", error: null, durationMs: 2 };

let pool: pg.Pool;
let webhookId: string;
let round = 0;

/** Two new events for the wallet's webhook; the first one's delivery claimed by `RUN.owner`. */
async function claimFirstOfTwo(): Promise<{ claimed: Claimed; otherEventId: string }> {
  round += 1;
  const events = [0, 1].map((i) => ({
    id: eventIdFor(`attempt-${round}-${i}`, "credit.topup"),
    event: "credit.topup" as const,
    wallet: WALLET,
    createdAt: new Date(),
    source: `attempt-${round}-${i}`,
    data: {},
  }));
  await inTransaction(pool, (client) => recordEvents(client, events));
  const [claimed] = await claimDueDeliveries(pool, RUN);
  expect(claimed?.event_id).toBe(events[0]!.id);
  return { claimed: claimed!, otherEventId: events[1]!.id };
}

async function delivery(eventId: string) {
  const { rows } = await pool.query<{ status: string; series_attempts: number; due_in_ms: number | null }>(
    `SELECT status, series_attempts, (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms
     FROM webhook_delivery WHERE event_id = $1`,
    [eventId],
  );
  return rows[0]!;
}

beforeAll(async () => {
  ({ pool } = await freshGatewaySchema(stack.databaseUrl, "record_attempt"));
  webhookId = (
    await insertWebhook(pool, { wallet: WALLET, url: "https://a.example/hook", events: ["credit.topup"], secret: "s" })
  ).id;
});

beforeEach(async () => {
  // Each test starts from an active webhook with nothing due.
  await pool.query("UPDATE webhook SET status = 'active', failed_at = NULL WHERE id = $1", [webhookId]);
  await pool.query("UPDATE webhook_delivery SET status = 'delivered', next_attempt_at = NULL WHERE status = 'pending'");
});

afterAll(async () => {
  await pool?.end();
});

describe("recording an attempt's outcome", () => {
  it("is one statement", async () => {
    const { claimed } = await claimFirstOfTwo();
    const queries = vi.spyOn(pg.Pool.prototype, "query");
    try {
      expect(await recordAttempt(pool, claimed, OK, new Date(), RUN)).toBe("delivered");
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
    }
    expect((await delivery(claimed.event_id)).status).toBe("delivered");
  });

  it("makes a failed attempt before the last due again after the schedule's delay", async () => {
    const { claimed } = await claimFirstOfTwo();
    expect(await recordAttempt(pool, claimed, FAILED, new Date(), RUN)).toBe("retry");
    const after = await delivery(claimed.event_id);
    expect(after).toMatchObject({ status: "pending", series_attempts: 1 });
    expect(after.due_in_ms).toBeGreaterThan(55_000);
    expect(after.due_in_ms).toBeLessThanOrEqual(60_000);
  });

  it("fails the delivery and its webhook after the last attempt of the series and holds the webhook's other deliveries", async () => {
    const { claimed, otherEventId } = await claimFirstOfTwo();
    await pool.query("UPDATE webhook_delivery SET series_attempts = 4 WHERE id = $1", [claimed.id]);
    expect(await recordAttempt(pool, claimed, FAILED, new Date(), RUN)).toBe("failed");
    expect(await delivery(claimed.event_id)).toMatchObject({ status: "failed", series_attempts: 5, due_in_ms: null });
    expect(await delivery(otherEventId)).toMatchObject({ status: "held", due_in_ms: null });
    const { rows } = await pool.query("SELECT status FROM webhook WHERE id = $1", [webhookId]);
    expect(rows[0].status).toBe("failed");
  });

  it("holds a delivery whose webhook failed meanwhile instead of making it due again", async () => {
    const { claimed } = await claimFirstOfTwo();
    await pool.query("UPDATE webhook SET status = 'failed', failed_at = now() WHERE id = $1", [webhookId]);
    expect(await recordAttempt(pool, claimed, FAILED, new Date(), RUN)).toBe("retry");
    expect(await delivery(claimed.event_id)).toMatchObject({ status: "held", due_in_ms: null });
  });

  it("from a dispatcher that lost the lease writes its attempt row and moves nothing", async () => {
    const { claimed } = await claimFirstOfTwo();
    await pool.query("UPDATE webhook_delivery SET lease_owner = 'dispatcher-b' WHERE id = $1", [claimed.id]);
    expect(await recordAttempt(pool, claimed, OK, new Date(), RUN)).toBe("lost_lease");
    expect(await delivery(claimed.event_id)).toMatchObject({ status: "pending", series_attempts: 0 });
    const { rows } = await pool.query("SELECT ok, status_code FROM webhook_attempt WHERE delivery_id = $1", [
      claimed.id,
    ]);
    expect(rows).toEqual([{ ok: true, status_code: 200 }]);
  });
});
