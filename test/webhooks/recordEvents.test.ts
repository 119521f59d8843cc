import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { eventIdFor } from "../../api/webhooks/eventId.js";
import { inTransaction, recordEvents, type NewEvent } from "../../api/webhooks/recordEvent.js";
import { insertWebhook } from "../../api/webhooks/webhookStore.js";
import { freshGatewaySchema } from "./support/startWebhookStack.js";

// Issue 26: an ingestion batch's events and their deliveries are stored by one statement (before: one per event),
// with the rules of one event at a time: each event once, deliveries in event order, fan-out to the wallet's
// subscribed webhooks (every subscriber for a worker event), a held delivery for a failed webhook.

const stack = inject("webhookStack");
const WALLET = "0x0000000000000000000000000000000000000e26";
const OTHER = "0x0000000000000000000000000000000000000f26";

let pool: pg.Pool;
let active: string;
let failed: string;
let other: string;
let batch = 0;

function topups(count: number, wallet = WALLET): NewEvent[] {
  batch += 1;
  return Array.from({ length: count }, (_, i) => {
    const source = `batch-${batch}-${i}`;
    return {
      id: eventIdFor(source, "credit.topup"),
      event: "credit.topup" as const,
      wallet,
      createdAt: new Date(),
      source,
      data: { n: i },
    };
  });
}

async function deliveries(eventIds: string[]): Promise<{ webhook_id: string; event_id: string; status: string }[]> {
  const { rows } = await pool.query<{ webhook_id: string; event_id: string; status: string }>(
    "SELECT webhook_id, event_id, status FROM webhook_delivery WHERE event_id = ANY ($1) ORDER BY id",
    [eventIds],
  );
  return rows;
}

/** Records `events` in a transaction, counting the statements sent after BEGIN (COMMIT aside). */
async function recordCounting(events: NewEvent[]): Promise<{ created: number; statements: number }> {
  return inTransaction(pool, async (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    let statements = 0;
    (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args) => {
      statements += 1;
      return query(...args);
    };
    try {
      const created = await recordEvents(client, events);
      return { created, statements };
    } finally {
      delete (client as unknown as { query?: unknown }).query;
    }
  });
}

beforeAll(async () => {
  ({ pool } = await freshGatewaySchema(stack.databaseUrl, "record_events"));
  const events = ["credit.topup", "worker.registered"] as const;
  active = (
    await insertWebhook(pool, { wallet: WALLET, url: "https://a.example/hook", events: [...events], secret: "whsec_a" })
  ).id;
  failed = (
    await insertWebhook(pool, { wallet: WALLET, url: "https://b.example/hook", events: [...events], secret: "whsec_b" })
  ).id;
  other = (
    await insertWebhook(pool, { wallet: OTHER, url: "https://c.example/hook", events: [...events], secret: "whsec_c" })
  ).id;
  await pool.query("UPDATE webhook SET status = 'failed', failed_at = now() WHERE id = $1", [failed]);
});

afterAll(async () => {
  await pool?.end();
});

describe("recording a batch of events", () => {
  it("stores the events of a batch and all their deliveries with one statement", async () => {
    const events = topups(5);
    expect(await recordCounting(events)).toEqual({ created: 10, statements: 1 });
    const { rows } = await pool.query("SELECT id FROM webhook_event WHERE id = ANY ($1)", [events.map((e) => e.id)]);
    expect(rows).toHaveLength(5);
  });

  it("creates each webhook's deliveries in the batch's event order", async () => {
    const events = topups(6);
    await recordCounting(events);
    const rows = await deliveries(events.map((event) => event.id));
    const ids = events.map((event) => event.id);
    expect(rows.filter((row) => row.webhook_id === active).map((row) => row.event_id)).toEqual(ids);
    expect(rows.filter((row) => row.webhook_id === failed).map((row) => row.event_id)).toEqual(ids);
  });

  it("gives a failed webhook a held delivery and an active one a pending delivery", async () => {
    const events = topups(2);
    await recordCounting(events);
    const rows = await deliveries(events.map((event) => event.id));
    expect(new Set(rows.filter((row) => row.webhook_id === active).map((row) => row.status))).toEqual(
      new Set(["pending"]),
    );
    expect(new Set(rows.filter((row) => row.webhook_id === failed).map((row) => row.status))).toEqual(
      new Set(["held"]),
    );
  });

  it("delivers a wallet's event only to its own webhooks and a worker event to every subscriber", async () => {
    const [own] = topups(1);
    const worker: NewEvent = {
      id: eventIdFor(`worker-${batch}`, "worker.registered"),
      event: "worker.registered",
      wallet: null,
      createdAt: new Date(),
      source: `worker-${batch}`,
      data: {},
    };
    await recordCounting([own!, worker]);
    expect(new Set((await deliveries([own!.id])).map((row) => row.webhook_id))).toEqual(new Set([active, failed]));
    expect(new Set((await deliveries([worker.id])).map((row) => row.webhook_id))).toEqual(
      new Set([active, failed, other]),
    );
  });

  it("records a batch seen before as nothing new, and only the new events of a partly seen one", async () => {
    const events = topups(3);
    await recordCounting(events);
    expect((await recordCounting(events)).created).toBe(0);
    const more = [...events, ...topups(2)];
    expect((await recordCounting(more)).created).toBe(4);
    expect(await deliveries(events.map((event) => event.id))).toHaveLength(6);
  });
});
