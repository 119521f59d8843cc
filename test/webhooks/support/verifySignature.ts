import { createHmac, timingSafeEqual } from "node:crypto";

// An independent implementation of the receiver side of the spec's Signature part (the README's recipe),
// deliberately not sharing code with api/webhooks/signPayload.ts.

export function verifySignature(
  header: string,
  rawBody: string,
  secret: string,
  toleranceSeconds = 300,
  now = Date.now(),
): boolean {
  const parts = Object.fromEntries(header.split(",").map((part) => part.split("=", 2) as [string, string]));
  const t = Number(parts["t"]);
  const v1 = parts["v1"];
  if (!Number.isInteger(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, "hex"));
}
