import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type pg from "pg";
import type { LocalAccount } from "viem";
import { chainActions, type ChainActions } from "./support/chainActions.js";
import { freshGatewaySchema, loadStackDeployment } from "./support/startWebhookStack.js";
import { indexKeyDirectory, startWebhookApi } from "./support/webhookApi.js";
import { attemptsOf, webhookFixture } from "./support/webhookFixture.js";
import { insertWebhook } from "../../api/webhooks/webhookStore.js";
import { MAX_WEBHOOKS_PER_WALLET } from "../../api/webhooks/webhookLimits.js";
import { startDispatcher } from "../../api/webhooks/startDispatcher.js";
import { ponderIndexReader } from "../../api/webhooks/chainEventFeed.js";
import { ATTEMPT_IN_FLIGHT_ERROR } from "../../api/webhooks/runDeliveries.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// POST/GET/DELETE /v1/webhooks behind the real authenticate middleware (keys from the index), production
// target policy; plus the delivery-time SSRF guard and the low-credit threshold setting.

const stack = inject("webhookStack");
let chain: ChainActions;
let pool: pg.Pool;
let api: { baseUrl: string; close: () => Promise<void> };
let owner: LocalAccount;
let ownerKey: string;
let otherKey: string;

async function call(method: string, path: string, key: string | null, body?: unknown) {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function waitUntilIndexed(key: string) {
  await waitFor("key indexed", async () => (await call("GET", "/v1/webhooks", key)).status === 200);
}

beforeAll(async () => {
  chain = chainActions(stack.rpcUrl, loadStackDeployment(stack));
  ({ pool } = await freshGatewaySchema(stack.databaseUrl, "routes"));
  api = await startWebhookApi({
    pool,
    keys: indexKeyDirectory(stack.indexerUrl),
    policy: { allowPrivateTargets: false, allowHttpLoopback: false },
    port: 8765,
  });
  owner = await chain.wallet(21);
  ownerKey = (await chain.registerKey(owner)).apiKey;
  otherKey = (await chain.registerKey(await chain.wallet(22))).apiKey;
  await waitUntilIndexed(ownerKey);
  await waitUntilIndexed(otherKey);
});

afterAll(async () => {
  await api?.close();
  await pool?.end();
});

describe("POST /v1/webhooks", () => {
  it("creates a webhook (201) and returns a generated whsec_ secret once", async () => {
    const created = await call("POST", "/v1/webhooks", ownerKey, {
      url: "https://hooks.example.com/a",
      events: ["job.completed"],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "webhook",
      url: "https://hooks.example.com/a",
      events: ["job.completed"],
      status: "active",
    });
    expect(created.body["id"]).toMatch(/^wh_[0-9A-Z]{26}$/);
    // The Standard Webhooks secret format: whsec_ + base64 of 24 random bytes.
    expect(created.body["secret"]).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(String(created.body["secret"]).slice(6), "base64")).toHaveLength(24);
    expect(Date.parse(String(created.body["created_at"]))).not.toBeNaN();
  });

  it("never echoes a secret the client chose", async () => {
    const created = await call("POST", "/v1/webhooks", ownerKey, {
      url: "https://hooks.example.com/b",
      events: ["credit.low"],
      secret: "my-own-secret-0123456789",
    });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty("secret");
    expect(JSON.stringify(created.body)).not.toContain("my-own-secret");
  });

  it("de-duplicates the event names", async () => {
    const created = await call("POST", "/v1/webhooks", ownerKey, {
      url: "https://hooks.example.com/c",
      events: ["job.failed", "job.failed", "credit.topup"],
    });
    expect(created.body["events"]).toEqual(["job.failed", "credit.topup"]);
  });

  it.each([
    [{ events: ["job.completed"] }, "url"],
    [{ url: "https://hooks.example.com", events: [] }, "events"],
    [{ url: "https://hooks.example.com" }, "events"],
    [{ url: "https://hooks.example.com", events: ["job.exploded"] }, "events.0"],
    [{ url: "https://hooks.example.com", events: ["job.completed"], secret: "short" }, "secret"],
    [{ url: "http://hooks.example.com", events: ["job.completed"] }, "url"],
    [{ url: "https://10.0.0.7/hook", events: ["job.completed"] }, "url"],
    [{ url: "https://[::ffff:169.254.169.254]/hook", events: ["job.completed"] }, "url"],
    [{ url: "https://localhost:8443/hook", events: ["job.completed"] }, "url"],
  ])("error: %j → invalid_request naming %s", async (body, param) => {
    const answer = await call("POST", "/v1/webhooks", ownerKey, body);
    expect(answer.status).toBe(400);
    expect(answer.body["error"]).toMatchObject({ code: "invalid_request", param });
  });

  it("error: no key → 401 missing_api_key", async () => {
    const answer = await call("POST", "/v1/webhooks", null, {
      url: "https://hooks.example.com",
      events: ["job.completed"],
    });
    expect(answer.status).toBe(401);
    expect(answer.body["error"]).toMatchObject({ code: "missing_api_key" });
  });
});

describe("GET /v1/webhooks", () => {
  it("lists the wallet's webhooks, newest first, without any secret", async () => {
    const list = await call("GET", "/v1/webhooks", ownerKey);
    expect(list.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    const data = list.body["data"] as Array<Record<string, unknown>>;
    expect(data.map((w) => w["url"])).toEqual([
      "https://hooks.example.com/c",
      "https://hooks.example.com/b",
      "https://hooks.example.com/a",
    ]);
    for (const webhook of data)
      expect(Object.keys(webhook).sort()).toEqual(["created_at", "events", "id", "object", "status", "url"]);
  });

  it("shows nothing of another wallet's webhooks", async () => {
    expect((await call("GET", "/v1/webhooks", otherKey)).body).toEqual({
      object: "list",
      data: [],
      has_more: false,
      next_cursor: null,
    });
  });
});

// Issue 11 item 6: a cap per wallet, and the list paginated like GET /v1/jobs.
describe("webhooks per wallet", () => {
  const hook = (n: number) => ({ url: `https://hooks.example.com/cap/${n}`, events: ["job.completed"] });

  it("caps a wallet at 20 webhooks: concurrent creations beyond it get 409 webhook_limit_reached", async () => {
    const { apiKey } = await chain.registerKey(await chain.wallet(27));
    await waitUntilIndexed(apiKey);
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, n) => call("POST", "/v1/webhooks", apiKey, hook(n))),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(MAX_WEBHOOKS_PER_WALLET);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(26 - MAX_WEBHOOKS_PER_WALLET);
    for (const answer of refused) {
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({
        error: {
          code: "webhook_limit_reached",
          message: expect.stringContaining("20 webhooks") as unknown,
          type: "conflict_error",
          param: null,
          docs: "http://docs.test/errors#webhook_limit_reached",
          details: { limit: 20 },
        },
      });
    }
    const listed = await call("GET", "/v1/webhooks?limit=100", apiKey);
    expect(listed.body["data"]).toHaveLength(MAX_WEBHOOKS_PER_WALLET);

    // A deleted webhook frees its place.
    const first = (listed.body["data"] as Array<{ id: string }>)[0]!.id;
    expect((await call("DELETE", `/v1/webhooks/${first}`, apiKey)).status).toBe(200);
    expect((await call("POST", "/v1/webhooks", apiKey, hook(99))).status).toBe(201);
    expect((await call("POST", "/v1/webhooks", apiKey, hook(100))).status).toBe(409);
  });

  describe("pagination", () => {
    let key: string;
    let ids: string[] = []; // oldest first

    beforeAll(async () => {
      key = (await chain.registerKey(await chain.wallet(28))).apiKey;
      await waitUntilIndexed(key);
      for (let n = 0; n < 5; n++) ids.push(String((await call("POST", "/v1/webhooks", key, hook(n))).body["id"]));
      ids = [...ids].sort(); // ids are time-ordered; created in sequence they sort as created
    });

    const idsOf = (body: Record<string, unknown>) => (body["data"] as Array<{ id: string }>).map((w) => w.id);

    it("defaults to a page of 20, newest first", async () => {
      const page = await call("GET", "/v1/webhooks", key);
      expect(idsOf(page.body)).toEqual([...ids].reverse());
      expect(page.body).toMatchObject({ has_more: false, next_cursor: null });
    });

    it("walks back with limit and before, next_cursor being the next page's before", async () => {
      const [a, b, c, d, e] = ids as [string, string, string, string, string];
      const first = await call("GET", "/v1/webhooks?limit=2", key);
      expect(first.body).toEqual(expect.objectContaining({ has_more: true, next_cursor: d }));
      expect(idsOf(first.body)).toEqual([e, d]);
      const second = await call("GET", `/v1/webhooks?limit=2&before=${d}`, key);
      expect(idsOf(second.body)).toEqual([c, b]);
      expect(second.body).toMatchObject({ has_more: true, next_cursor: b });
      const third = await call("GET", `/v1/webhooks?limit=2&before=${b}`, key);
      expect(idsOf(third.body)).toEqual([a]);
      expect(third.body).toMatchObject({ has_more: false, next_cursor: null });
    });

    it("walks forward with after (pages still newest first), next_cursor being the next page's after", async () => {
      const [a, b, c, d, e] = ids as [string, string, string, string, string];
      const first = await call("GET", `/v1/webhooks?limit=2&after=${a}`, key);
      expect(idsOf(first.body)).toEqual([c, b]);
      expect(first.body).toMatchObject({ has_more: true, next_cursor: c });
      const second = await call("GET", `/v1/webhooks?limit=2&after=${c}`, key);
      expect(idsOf(second.body)).toEqual([e, d]);
      expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
      const bounded = await call("GET", `/v1/webhooks?after=${a}&before=${e}`, key);
      expect(idsOf(bounded.body)).toEqual([d, c, b]);
    });

    it("filters by status", async () => {
      await pool.query("UPDATE webhook SET status = 'failed' WHERE id = $1", [ids[1]]);
      expect(idsOf((await call("GET", "/v1/webhooks?status=failed", key)).body)).toEqual([ids[1]]);
      expect(idsOf((await call("GET", "/v1/webhooks?status=active&limit=1", key)).body)).toEqual([ids[4]]);
    });

    it.each([
      // The API's one query rule (api/http/parseQuery.ts): an array form is named by its parameter.
      ["status[]=failed", "status"],
      ["limit[]=5", "limit"],
      ["before[0]=wh_01ARZ3NDEKTSV4RRFFQ69G5FAV", "before"],
      ["limit=1&limit=2", "limit"],
      ["limit=0x5", "limit"],
      ["limit=1e1", "limit"],
      ["limit=+5", "limit"],
      ["limit=5.0", "limit"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=", "limit"],
      ["before=job_01ARZ3NDEKTSV4RRFFQ69G5FAV", "before"],
      ["after=wh_nonsense", "after"],
      ["status=deleted", "status"],
      ["status=active&status=failed", "status"],
      ["cursor=abc", "cursor"],
    ])("error: ?%s → 400 invalid_request naming %s", async (query, param) => {
      const answer = await call("GET", `/v1/webhooks?${query}`, key);
      expect(answer.status).toBe(400);
      expect(answer.body["error"]).toMatchObject({ code: "invalid_request", param });
    });
  });
});

describe("DELETE /v1/webhooks/{id}", () => {
  it("error: another wallet's webhook → 404 webhook_not_found", async () => {
    const created = await call("POST", "/v1/webhooks", ownerKey, {
      url: "https://hooks.example.com/d",
      events: ["job.completed"],
    });
    const answer = await call("DELETE", `/v1/webhooks/${String(created.body["id"])}`, otherKey);
    expect(answer.status).toBe(404);
    expect(answer.body["error"]).toMatchObject({ code: "webhook_not_found" });
  });

  it("deletes the webhook and answers {id, object, deleted: true}; a second delete is 404", async () => {
    const created = await call("POST", "/v1/webhooks", ownerKey, {
      url: "https://hooks.example.com/e",
      events: ["job.completed"],
    });
    const id = String(created.body["id"]);
    expect((await call("DELETE", `/v1/webhooks/${id}`, ownerKey)).body).toEqual({
      id,
      object: "webhook",
      deleted: true,
    });
    expect((await call("DELETE", `/v1/webhooks/${id}`, ownerKey)).status).toBe(404);
    const list = (await call("GET", "/v1/webhooks", ownerKey)).body["data"] as Array<{ id: string }>;
    expect(list.map((w) => w.id)).not.toContain(id);
  });

  it("error: a malformed id → 404 webhook_not_found", async () => {
    expect((await call("DELETE", "/v1/webhooks/nonsense", ownerKey)).status).toBe(404);
  });
});

describe("query parameters of POST and DELETE /v1/webhooks", () => {
  it("error: both take none; any is 400 invalid_request naming it, and nothing is created or deleted", async () => {
    const hook = { url: "https://hooks.example.com/q", events: ["job.completed"] };
    const before = (await call("GET", "/v1/webhooks?limit=100", ownerKey)).body["data"] as Array<{ id: string }>;
    const created = await call("POST", "/v1/webhooks?dry_run=1", ownerKey, hook);
    expect(created.status).toBe(400);
    expect(created.body["error"]).toMatchObject({ code: "invalid_request", param: "dry_run" });
    const after = (await call("GET", "/v1/webhooks?limit=100", ownerKey)).body["data"] as Array<{ id: string }>;
    expect(after).toHaveLength(before.length);

    const id = String((await call("POST", "/v1/webhooks", ownerKey, hook)).body["id"]);
    const deleted = await call("DELETE", `/v1/webhooks/${id}?force=true`, ownerKey);
    expect(deleted.status).toBe(400);
    expect(deleted.body["error"]).toMatchObject({ code: "invalid_request", param: "force" });
    expect((await call("DELETE", `/v1/webhooks/${id}`, ownerKey)).status).toBe(200);
  });
});

describe("ownership", () => {
  it("keeps the wallet's webhooks when its key is rotated", async () => {
    const wallet = await chain.wallet(23);
    const { apiKey } = await chain.registerKey(wallet);
    await waitUntilIndexed(apiKey);
    const created = await call("POST", "/v1/webhooks", apiKey, {
      url: "https://hooks.example.com/r",
      events: ["job.completed"],
    });
    const rotated = await chain.rotateKey(wallet);
    await waitUntilIndexed(rotated.apiKey);
    const list = (await call("GET", "/v1/webhooks", rotated.apiKey)).body["data"] as Array<{ id: string }>;
    expect(list.map((w) => w.id)).toEqual([created.body["id"]]);
    expect((await call("GET", "/v1/webhooks", apiKey)).status).toBe(401);
  });
});

describe("delivery-time target check", () => {
  it("refuses to connect when the host resolves to a loopback address (production policy)", async () => {
    const fixture = await webhookFixture(stack, { name: "ssrf", walletIndex: 24, receiverPort: 8777 });
    try {
      // Stored directly: registration would refuse `localhost`; this stands for a public name whose DNS later
      // points inside.
      const sneaky = await insertWebhook(fixture.pool, {
        wallet: fixture.wallet.address,
        url: fixture.receiver.url, // https://localhost:<port>/hooks: a name, resolved at delivery time
        events: ["credit.topup"],
        secret: "whsec_ssrf_0123456789abcdef",
      });
      const dispatcher = startDispatcher({
        pool: fixture.pool,
        index: ponderIndexReader(stack.indexerUrl),
        policy: { allowPrivateTargets: false, allowHttpLoopback: false },
        retryScheduleMs: [0, 50, 50, 50, 50],
        timeoutMs: 1_000,
        extraCa: fixture.cert.cert,
      });
      try {
        await fixture.chain.deposit(fixture.wallet, 100n);
        const attempts = await waitFor("attempt recorded", async () => {
          const rows = await attemptsOf(fixture.pool, sneaky.id);
          return rows.length > 0 && rows[0]?.error !== ATTEMPT_IN_FLIGHT_ERROR ? rows : undefined;
        });
        expect(attempts[0]).toMatchObject({ ok: false, status_code: null });
        expect(attempts[0]?.error).toContain("refused target");
        await sleep(300);
        expect(fixture.receiver.requests).toHaveLength(0);
      } finally {
        await dispatcher.stop();
      }
    } finally {
      await fixture.close();
    }
  });
});

describe("/app/webhooks/settings", () => {
  it("reads the default low-credit threshold and stores a new one for the wallet", async () => {
    const headers = { "x-test-wallet": owner.address, "content-type": "application/json" };
    const read = await fetch(`${api.baseUrl}/app/webhooks/settings`, { headers });
    expect(await read.json()).toEqual({ object: "webhook_settings", low_credit_threshold: 100 });
    const put = await fetch(`${api.baseUrl}/app/webhooks/settings`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ low_credit_threshold: 250 }),
    });
    expect(await put.json()).toEqual({ object: "webhook_settings", low_credit_threshold: 250 });
    expect(await (await fetch(`${api.baseUrl}/app/webhooks/settings`, { headers })).json()).toMatchObject({
      low_credit_threshold: 250,
    });
    const bad = await fetch(`${api.baseUrl}/app/webhooks/settings`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ low_credit_threshold: -1 }),
    });
    expect(bad.status).toBe(400);
  });
});
