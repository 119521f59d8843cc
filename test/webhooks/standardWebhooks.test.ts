import { randomBytes } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { generateSecret, insertWebhook } from "../../api/webhooks/webhookStore.js";
import type { ReceivedRequest } from "./support/httpsReceiver.js";
import { verifySignature } from "./support/verifySignature.js";
import { webhookFixture, type WebhookFixture } from "./support/webhookFixture.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// Issue 13 item 2: besides the spec's Service-Signature, every delivery carries webhook-id, webhook-timestamp and
// webhook-signature per the Standard Webhooks specification. Verified here with the `standardwebhooks` package
// (Standard Webhooks) and with node:crypto (Service-Signature, test/webhooks/support/verifySignature.ts), never with
// the product's signing code.

const stack = inject("webhookStack");
let fixture: WebhookFixture;

/** The secrets under test, by the query string of their webhook's URL. */
const secrets = {
  generated: generateSecret(),
  chosenBase64: `whsec_${randomBytes(32).toString("base64")}`,
  chosenPlain: "my-own-plain-secret-0123456789",
};

const byVariant = new Map<string, ReceivedRequest>();

beforeAll(async () => {
  fixture = await webhookFixture(stack, { name: "standard", walletIndex: 32, receiverPort: 8783 });
  for (const [variant, secret] of Object.entries(secrets)) {
    await insertWebhook(fixture.pool, {
      wallet: fixture.wallet.address,
      url: `${fixture.receiver.url}?variant=${variant}`,
      events: ["credit.topup"],
      secret,
    });
  }
  fixture.startDispatcher();
  await fixture.chain.deposit(fixture.wallet, 100n);
  await waitFor("four deliveries", () => fixture.receiver.requests.length >= 4);
  for (const request of fixture.receiver.requests)
    byVariant.set(new URL(request.url, "https://x").searchParams.get("variant") ?? "fixture", request);
});

afterAll(async () => {
  await fixture?.close();
});

const standardHeaders = (request: ReceivedRequest) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"]),
});

describe("Standard Webhooks", () => {
  it("verifies with the package, a generated secret used as is", () => {
    const request = byVariant.get("generated")!;
    expect(new Webhook(secrets.generated).verify(request.rawBody, standardHeaders(request))).toEqual(
      JSON.parse(request.rawBody),
    );
  });

  it("verifies with the package, a chosen whsec_<base64> secret used as is", () => {
    const request = byVariant.get("chosenBase64")!;
    expect(new Webhook(secrets.chosenBase64).verify(request.rawBody, standardHeaders(request))).toEqual(
      JSON.parse(request.rawBody),
    );
  });

  it("verifies with the package, any other chosen secret as raw bytes", () => {
    for (const [variant, secret] of [
      ["chosenPlain", secrets.chosenPlain],
      ["fixture", fixture.secret], // whsec_test_… is not base64
    ] as const) {
      const request = byVariant.get(variant)!;
      expect(new Webhook(secret, { format: "raw" }).verify(request.rawBody, standardHeaders(request))).toEqual(
        JSON.parse(request.rawBody),
      );
    }
  });

  it("webhook-id is the event id and webhook-timestamp the Service-Signature's t", () => {
    for (const request of byVariant.values()) {
      const envelope = JSON.parse(request.rawBody) as { id: string };
      expect(request.headers["webhook-id"]).toBe(envelope.id);
      expect(request.headers["service-event-id"]).toBe(envelope.id);
      expect(String(request.headers["service-signature"])).toMatch(
        new RegExp(`^t=${String(request.headers["webhook-timestamp"])},v1=[0-9a-f]{64}$`),
      );
      expect(String(request.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
  });

  it("the spec's Service-Signature is still there and verifies with node:crypto", () => {
    for (const [variant, request] of byVariant) {
      const secret = variant === "fixture" ? fixture.secret : secrets[variant as keyof typeof secrets];
      expect(verifySignature(String(request.headers["service-signature"]), request.rawBody, secret)).toBe(true);
    }
  });

  it("error: a changed body, another webhook's secret or an old timestamp do not verify", () => {
    const request = byVariant.get("generated")!;
    const headers = standardHeaders(request);
    const verifier = new Webhook(secrets.generated);
    expect(() => verifier.verify(`${request.rawBody} `, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secrets.chosenBase64).verify(request.rawBody, headers)).toThrow(WebhookVerificationError);
    const old = { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 600) };
    expect(() => verifier.verify(request.rawBody, old)).toThrow(WebhookVerificationError);
  });
});
