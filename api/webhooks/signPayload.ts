import { createHmac } from "node:crypto";

/** `Service-Signature` value: `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (spec, Signature). */
export function signPayload(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${v1}`;
}
