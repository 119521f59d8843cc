import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { inTransaction, takeCursor } from "../../api/webhooks/recordEvent.js";
import { freshGatewaySchema } from "./support/startWebhookStack.js";

// The ingestion cursor: one dispatcher ingests at a time (row lock, SKIP LOCKED); the row is created on first use.
// Issue 26: a round that finds the cursor held by another dispatcher costs one statement, not a failed insert too.

const stack = inject("webhookStack");
let pool: pg.Pool;

/** Runs `work` while another dispatcher's transaction holds cursor `name`. */
async function whileHeld<T>(name: string, work: () => Promise<T>): Promise<T> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = () => {};
  const holding = new Promise<void>((resolve) => (held = resolve));
  const holder = inTransaction(pool, async (client) => {
    expect(await takeCursor(client, name)).toBeDefined();
    held();
    await released;
  });
  await holding;
  try {
    return await work();
  } finally {
    release();
    await holder;
  }
}

beforeAll(async () => {
  ({ pool } = await freshGatewaySchema(stack.databaseUrl, "take_cursor"));
});

afterAll(async () => {
  await pool?.end();
});

describe("taking the ingestion cursor", () => {
  it("creates a missing cursor at the start of the log", async () => {
    const taken = await inTransaction(pool, (client) => takeCursor(client, "fresh"));
    expect(taken?.position).toBe("");
    const { rows } = await pool.query("SELECT position FROM webhook_cursor WHERE name = 'fresh'");
    expect(rows).toEqual([{ position: "" }]);
  });

  it("returns the stored position to the dispatcher that takes it", async () => {
    await pool.query("INSERT INTO webhook_cursor (name, position) VALUES ('stored', '000042')");
    expect((await inTransaction(pool, (client) => takeCursor(client, "stored")))?.position).toBe("000042");
  });

  it("is not given while another dispatcher holds it, and costs that round one statement", async () => {
    await inTransaction(pool, (client) => takeCursor(client, "shared"));
    const outcome = await whileHeld("shared", () =>
      inTransaction(pool, async (client) => {
        const queries = vi.spyOn(client, "query");
        try {
          return { taken: await takeCursor(client, "shared"), statements: queries.mock.calls.length };
        } finally {
          queries.mockRestore();
        }
      }),
    );
    expect(outcome).toEqual({ taken: undefined, statements: 1 });
  });
});
