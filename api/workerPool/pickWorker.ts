import type { Hex } from "viem";

export interface WorkerCandidate {
  address: Hex;
  endpoint: string;
  /** Jobs this gateway currently has running on the worker. */
  inflight: number;
  /** Median observed time to first token, ms; undefined before the first sample. */
  ttftP50Ms: number | undefined;
}

/**
 * Picks the worker for a job: least in-flight first, then the lowest observed time to first token. A worker
 * without samples counts as fastest so new workers get traffic and a sample. `exclude` holds workers that
 * already failed this job (failover never retries the same worker).
 */
export function pickWorker(
  candidates: readonly WorkerCandidate[],
  exclude: ReadonlySet<string> = new Set(),
): WorkerCandidate | undefined {
  let best: WorkerCandidate | undefined;
  for (const candidate of candidates) {
    if (exclude.has(candidate.address.toLowerCase())) continue;
    if (!best || isBetter(candidate, best)) best = candidate;
  }
  return best;
}

function isBetter(a: WorkerCandidate, b: WorkerCandidate): boolean {
  if (a.inflight !== b.inflight) return a.inflight < b.inflight;
  return (a.ttftP50Ms ?? 0) < (b.ttftP50Ms ?? 0);
}
