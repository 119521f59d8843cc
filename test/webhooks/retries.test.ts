import { afterEach, describe, expect, inject, it } from "vitest";
import {
  attemptsOf,
  deliveriesOf,
  webhookFixture,
  webhookStatus,
  TEST_SCHEDULE_MS,
  type WebhookFixture,
} from "./support/webhookFixture.js";
import { startWebhookApi } from "./support/webhookApi.js";
import { setLowCreditThreshold } from "../../api/webhooks/deliveryStore.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Delivery outcomes and the retry schedule (spec, Delivery and retries), with a compressed schedule
// (0, 200, 200, 200, 200 ms) and short timeouts; the receiver is an HTTPS TEST DOUBLE.

const stack = inject("webhookStack");
let fixture: WebhookFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("retries", () => {
  it("retries a receiver that fails four times and records the fifth attempt as delivered", async () => {
    fixture = await webhookFixture(stack, { name: "retry_success", walletIndex: 14, receiverPort: 8771 });
    const { receiver, pool, webhookId } = fixture;
    receiver.setBehaviour(({ index }) =>
      index < 4 ? { status: 500, body: `boom\u0000 ${index}` } : { status: 200, body: "ok" },
    );
    fixture.startDispatcher();
    await fixture.chain.deposit(fixture.wallet, 100n);

    await waitFor("delivered", async () => (await deliveriesOf(pool, webhookId))[0]?.status === "delivered");
    const attempts = await attemptsOf(pool, webhookId);
    expect(attempts.map((a) => [a.attempt_number, a.status_code, a.ok])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
      [4, 500, false],
      [5, 200, true],
    ]);
    // The same event (same id, same bytes) every time.
    expect(new Set(receiver.requests.map((r) => r.rawBody)).size).toBe(1);
    expect(new Set(receiver.requests.map((r) => r.headers["service-event-id"])).size).toBe(1);
    expect(receiver.requests.map((r) => r.headers["service-delivery-attempt"])).toEqual(["1", "2", "3", "4", "5"]);
    // Attempts k+1 waited the schedule's delay after attempt k.
    for (let k = 1; k < attempts.length; k++) {
      const gap = attempts[k]!.started_at.getTime() - attempts[k - 1]!.started_at.getTime();
      expect(gap).toBeGreaterThanOrEqual(TEST_SCHEDULE_MS[k]! - 5);
    }
    expect(await webhookStatus(pool, webhookId)).toBe("active");
    // Response snippets are kept (a NUL byte, which Postgres text cannot hold, is dropped).
    const snippets = await pool.query<{ response_snippet: string }>(
      "SELECT response_snippet FROM webhook_attempt ORDER BY attempt_number",
    );
    expect(snippets.rows.map((r) => r.response_snippet)).toEqual(["boom 0", "boom 1", "boom 2", "boom 3", "ok"]);
  });

  it("marks the webhook failed after five failed attempts and attempts nothing more", async () => {
    fixture = await webhookFixture(stack, { name: "retry_failed", walletIndex: 15, receiverPort: 8772 });
    const { receiver, pool, webhookId } = fixture;
    receiver.setBehaviour(() => ({ status: 503, body: "down for maintenance" }));
    fixture.startDispatcher();
    await fixture.chain.deposit(fixture.wallet, 100n);

    await waitFor("webhook failed", async () => (await webhookStatus(pool, webhookId)) === "failed");
    await sleep(1_000);
    expect(receiver.requests).toHaveLength(5);
    expect((await deliveriesOf(pool, webhookId)).map((d) => d.status)).toEqual(["failed"]);
    const attempts = await attemptsOf(pool, webhookId);
    expect(attempts.map((a) => a.status_code)).toEqual([503, 503, 503, 503, 503]);

    // A later event for the failed webhook is held, not attempted.
    await fixture.chain.deposit(fixture.wallet, 100n);
    await waitFor("second delivery held", async () => (await deliveriesOf(pool, webhookId))[1]?.status === "held");
    await sleep(500);
    expect(receiver.requests).toHaveLength(5);
  });

  it("counts an answer slower than the timeout as a failed attempt", async () => {
    fixture = await webhookFixture(stack, { name: "retry_slow", walletIndex: 16, receiverPort: 8773 });
    const { receiver, pool, webhookId } = fixture;
    receiver.setBehaviour(({ index }) => (index === 0 ? { status: 200, delayMs: 1_500 } : { status: 200 }));
    fixture.startDispatcher({ timeoutMs: 500 });
    await fixture.chain.deposit(fixture.wallet, 100n);

    await waitFor("delivered", async () => (await deliveriesOf(pool, webhookId))[0]?.status === "delivered");
    const attempts = await attemptsOf(pool, webhookId);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ ok: false, status_code: null, error: "timeout after 500 ms" });
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(490);
    expect(attempts[0]!.duration_ms).toBeLessThan(1_400);
    expect(attempts[1]).toMatchObject({ ok: true, status_code: 200 });
  });

  it("lists failed deliveries with their attempts in the web app and replays them, re-activating the webhook", async () => {
    fixture = await webhookFixture(stack, { name: "replay", walletIndex: 17, receiverPort: 8774 });
    const { receiver, pool, webhookId, wallet } = fixture;
    receiver.setBehaviour(() => ({ status: 500, body: "nope" }));
    fixture.startDispatcher();
    await fixture.chain.deposit(fixture.wallet, 100n);
    await waitFor("webhook failed", async () => (await webhookStatus(pool, webhookId)) === "failed");
    await fixture.chain.deposit(fixture.wallet, 100n); // held
    await waitFor("held", async () => (await deliveriesOf(pool, webhookId))[1]?.status === "held");

    const api = await startWebhookApi({
      pool,
      keys: { lookup: async () => null },
      policy: { allowPrivateTargets: true, allowHttpLoopback: false },
      port: 8764,
    });
    try {
      const asOwner = { "x-test-wallet": wallet.address, "content-type": "application/json" };
      const list = (await (await fetch(`${api.baseUrl}/app/webhooks/deliveries`, { headers: asOwner })).json()) as {
        data: Array<{
          id: string;
          status: string;
          attempts: Array<{ status_code: number; response_snippet: string }>;
          event: { event: string };
        }>;
      };
      expect(list.data.map((d) => d.status)).toEqual(["held", "failed"]);
      expect(list.data[1]!.attempts).toHaveLength(5);
      expect(list.data[1]!.attempts[0]).toMatchObject({ status_code: 500, response_snippet: "nope" });
      expect(list.data[1]!.event.event).toBe("credit.topup");

      // Another wallet sees none of it and cannot replay it.
      const stranger = { "x-test-wallet": "0x000000000000000000000000000000000000dead" };
      expect(
        (
          (await (await fetch(`${api.baseUrl}/app/webhooks/deliveries`, { headers: stranger })).json()) as {
            data: unknown[];
          }
        ).data,
      ).toEqual([]);
      expect(
        (
          await fetch(`${api.baseUrl}/app/webhooks/deliveries/${list.data[1]!.id}/replay`, {
            method: "POST",
            headers: stranger,
          })
        ).status,
      ).toBe(404);
      expect((await fetch(`${api.baseUrl}/app/webhooks/deliveries`)).status).toBe(401);

      receiver.setBehaviour(() => ({ status: 204 }));
      const replayOne = await fetch(`${api.baseUrl}/app/webhooks/deliveries/${list.data[1]!.id}/replay`, {
        method: "POST",
        headers: asOwner,
      });
      expect(await replayOne.json()).toEqual({ object: "replay", replayed: 1 });
      expect(await webhookStatus(pool, webhookId)).toBe("active");
      await waitFor("first delivered", async () => (await deliveriesOf(pool, webhookId))[0]?.status === "delivered");
      expect((await deliveriesOf(pool, webhookId))[1]?.status).toBe("held");

      const replayAll = await fetch(`${api.baseUrl}/app/webhooks/deliveries/replay`, {
        method: "POST",
        headers: asOwner,
        body: "{}",
      });
      expect(await replayAll.json()).toEqual({ object: "replay", replayed: 1 });
      await waitFor("all delivered", async () =>
        (await deliveriesOf(pool, webhookId)).every((d) => d.status === "delivered"),
      );
      // The replayed event is the same event: same id and bytes as the failed attempts.
      const bodies = receiver.requests.map((r) => r.rawBody);
      expect(bodies[5]).toBe(bodies[0]);
      expect((await attemptsOf(pool, webhookId)).map((a) => a.attempt_number)).toEqual([1, 2, 3, 4, 5, 6, 1]);
    } finally {
      await api.close();
    }
  });

  it("fires credit.low at the wallet's own threshold from Settings", async () => {
    fixture = await webhookFixture(stack, {
      name: "threshold",
      walletIndex: 26,
      receiverPort: 8779,
      events: ["credit.low"],
    });
    const { receiver, pool, wallet, chain } = fixture;
    await setLowCreditThreshold(pool, wallet.address, 250);
    fixture.startDispatcher();
    const { keyHash } = await chain.registerKey(wallet);
    await chain.deposit(wallet, 300n); // 300: above 250
    await chain.openJob(keyHash, "llama-3.3-70b-instruct", 100); // 260
    await chain.openJob(keyHash, "llama-3.3-70b-instruct", 100); // 220: crosses 250

    await waitFor("credit.low", () => receiver.requests.length > 0);
    await sleep(500);
    expect(receiver.requests.map((r) => (JSON.parse(r.rawBody) as { data: unknown }).data)).toEqual([
      { credits_remaining: 220, usdg_value: 2.2, threshold: 250 },
    ]);
  });
});
