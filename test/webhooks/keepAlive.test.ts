import { afterEach, describe, expect, inject, it } from "vitest";
import { attemptsOf, deliveriesOf, webhookFixture, type WebhookFixture } from "./support/webhookFixture.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Issue 12 item 5: a send on a kept-alive connection that the receiver closed while idle (ECONNRESET "socket hang
// up" to a healthy receiver) is retried at once on a fresh connection, within the same attempt, instead of failing
// the attempt and waiting for the retry schedule.

const stack = inject("webhookStack");
let fixture: WebhookFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("stale keep-alive connections", () => {
  it("a delivery whose reused connection was closed by the receiver succeeds on a fresh connection as attempt 1", async () => {
    fixture = await webhookFixture(stack, {
      name: "keepalive",
      walletIndex: 29,
      receiverPort: 8781,
      // TEST DOUBLE receiver that drops idle keep-alive connections after 100 ms without announcing it.
      receiverOptions: { closeIdleAfterMs: 100 },
    });
    const f = fixture;
    f.startDispatcher();
    const rounds = 4;
    for (let round = 1; round <= rounds; round++) {
      await f.chain.deposit(f.wallet, 100n);
      await waitFor(`delivery ${round}`, async () => {
        const delivered = (await deliveriesOf(f.pool, f.webhookId)).filter((d) => d.status === "delivered");
        return delivered.length === round;
      });
      await sleep(300); // the kept-alive connection is now stale for the receiver, not for the sender
    }

    // The scenario happened: some sends went out on a connection the receiver had given up on...
    const dropped = f.receiver.requests.filter((r) => r.dropped);
    expect(dropped.length).toBeGreaterThanOrEqual(1);
    expect(dropped.every((r) => r.reusedConnection)).toBe(true);
    // ...and each was re-sent at once on a new connection, with the same attempt number, and answered.
    const answered = f.receiver.requests.filter((r) => !r.dropped);
    expect(answered).toHaveLength(rounds);
    expect(answered.every((r) => r.answered === 200)).toBe(true);
    expect(answered.map((r) => r.headers["service-delivery-attempt"])).toEqual(Array(rounds).fill("1"));
    for (const request of dropped) {
      const resend = answered.find((r) => r.rawBody === request.rawBody);
      expect(resend?.reusedConnection).toBe(false);
      expect(resend?.headers["service-delivery-attempt"]).toBe(request.headers["service-delivery-attempt"]);
    }
    // No failed attempt was recorded: one successful attempt per delivery.
    const attempts = await attemptsOf(f.pool, f.webhookId);
    expect(attempts.map((a) => [a.attempt_number, a.ok])).toEqual(Array(rounds).fill([1, true]));
  });
});
