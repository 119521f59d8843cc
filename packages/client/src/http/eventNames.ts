/** The ten event names of the spec (Events part). */
export const EVENT_NAMES = [
  "job.submitted",
  "job.processing",
  "job.completed",
  "job.failed",
  "job.timeout",
  "job.disputed",
  "credit.low",
  "credit.topup",
  "worker.registered",
  "worker.slashed",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** Provider-facing events: delivered to every webhook subscribed to them, whatever its wallet. */
export const WORKER_EVENTS: ReadonlySet<EventName> = new Set(["worker.registered", "worker.slashed"]);

/** `api_version` of every envelope (spec: a date, YYYY-MM-DD). */
export const API_VERSION = "2026-11-01";

/** Default `credit.low` threshold (spec, Limits). */
export const DEFAULT_LOW_CREDIT_THRESHOLD = 100;
