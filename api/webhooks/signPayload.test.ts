import { createHmac } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signPayload, signStandardWebhook, standardWebhookKey } from "./signPayload.js";

// Issue 13 item 2: which Standard Webhooks key a webhook secret signs with, checked against the `standardwebhooks`
// package (the reference verifier), and the spec's Service-Signature against node:crypto.

const body = '{"id":"evt_1","event":"credit.topup","data":{}}';
const now = () => Math.floor(Date.now() / 1000);

function standardHeaders(secret: string, t = now()) {
  return {
    "webhook-id": "evt_1",
    "webhook-timestamp": String(t),
    "webhook-signature": signStandardWebhook(standardWebhookKey(secret), "evt_1", t, body),
  };
}

describe("standardWebhookKey", () => {
  it.each([
    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // 24 bytes, as generated
    "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAA+/+/", // standard alphabet
    "whsec_c2hvcnQgYnV0IHBhZGRlZA==", // padded
  ])("a whsec_<base64> secret (%s) verifies with new Webhook(secret)", (secret) => {
    expect(new Webhook(secret).verify(body, standardHeaders(secret))).toEqual(JSON.parse(body));
  });

  it.each([
    "my-own-secret-0123456789",
    "whsec_test_name_0123456789", // `_` is not standard base64
    "whsec_c2hvcnQgYnV0IHBhZGRlZA", // unpadded
    "whsec_!!!!!!!!!!!!!!!!",
  ])("any other secret (%s) verifies with new Webhook(secret, {format: 'raw'})", (secret) => {
    expect(new Webhook(secret, { format: "raw" }).verify(body, standardHeaders(secret))).toEqual(JSON.parse(body));
  });

  it("error: a whsec_<base64> secret's signature does not verify as raw bytes, nor the reverse", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    expect(() => new Webhook(secret, { format: "raw" }).verify(body, standardHeaders(secret))).toThrow(
      WebhookVerificationError,
    );
  });
});

describe("signPayload (Service-Signature)", () => {
  it("is t=<t>,v1=<hex HMAC-SHA256 keyed with the secret's characters over '<t>.<body>'>", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`1700000000.${body}`).digest("hex");
    expect(signPayload(secret, body, 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
  });
});
