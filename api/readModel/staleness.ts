import type { Response } from "express";

/**
 * Response header of the read endpoints (`/v1/account`, `/v1/jobs`, `/v1/jobs/{id}`, `/v1/models`) when part of
 * the answer may be older than the chain: whole seconds, rounded up. Set when the index lags behind the chain by
 * a second or more, or when the index (or the chain) did not answer and the gateway's last known state was used.
 * Absent on a fresh answer.
 */
export const STALE_HEADER = "x-service-stale-seconds";

/** Adds (or raises) the staleness header; ages under a second are not reported. */
export function markStale(res: Response, seconds: number | undefined): void {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 1) return;
  const previous = Number(res.getHeader(STALE_HEADER) ?? 0);
  const value = Math.max(previous, Math.ceil(seconds));
  res.setHeader(STALE_HEADER, String(value));
}
