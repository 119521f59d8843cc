import { createHmac } from "node:crypto";

/** `Service-Signature` value: `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (spec, Signature). */
export function signPayload(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${v1}`;
}

/** `whsec_` followed by standard, correctly padded base64 (what the `standardwebhooks` libraries decode). */
const STANDARD_SECRET = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/**
 * The Standard Webhooks signing key of a webhook secret (README, "Standard Webhooks"): a secret of the form
 * `whsec_<base64>` (every generated secret) signs with the bytes the base64 encodes, so stock receivers use it
 * as is (`new Webhook(secret)`); any other secret signs with its own bytes (`new Webhook(secret, {format: "raw"})`).
 */
export function standardWebhookKey(secret: string): Buffer {
  const encoded = STANDARD_SECRET.exec(secret)?.[1];
  return encoded ? Buffer.from(encoded, "base64") : Buffer.from(secret, "utf8");
}

/**
 * `webhook-signature` value per the Standard Webhooks specification: `v1,<base64 HMAC-SHA256(key,
 * "<webhook-id>.<webhook-timestamp>.<raw body>")>`.
 */
export function signStandardWebhook(key: Buffer, messageId: string, unixSeconds: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${messageId}.${unixSeconds}.${body}`).digest("base64")}`;
}
