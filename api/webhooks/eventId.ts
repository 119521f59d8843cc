import { createHash } from "node:crypto";
import type { EventName } from "@credit-metered/client/http";

/**
 * `evt_<32 hex>` from the fact an event reports: the chain event id (`<chainId>:<block>:<logIndex>`) or, for
 * `job.processing`, the job id. A restart, a re-ingestion or a replay therefore never mints another id for the
 * same fact, and receivers can de-duplicate on it.
 */
export function eventIdFor(source: string, event: EventName): string {
  return `evt_${createHash("sha256").update(`${source}|${event}`).digest("hex").slice(0, 32)}`;
}
