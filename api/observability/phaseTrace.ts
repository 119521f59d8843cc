import { appendFileSync } from "node:fs";

/**
 * Opt-in timing of the path before a job is routed (issue 26): with `GATEWAY_PHASE_TRACE=<file>` each routed job
 * appends one JSON line of its phase durations (ms) to the file, for finding where the added time to first token
 * goes. Off (the default) every call is a no-op costing one branch.
 */
const file = process.env.GATEWAY_PHASE_TRACE;
export const phaseTraceOn = Boolean(file);

/** Phases of one signed transaction, ms since its send began (fees, signed, persisted, broadcast). */
const transactions = new Map<string, Record<string, number>>();

/** The timings of the transaction `hash`, kept until a job reads them (bounded: the oldest go first). */
export function traceTransaction(hash: string, marks: Record<string, number>): void {
  if (!file) return;
  const key = hash.toLowerCase();
  transactions.set(key, { ...transactions.get(key), ...marks });
  if (transactions.size > 10_000) transactions.delete(transactions.keys().next().value!);
}

export function transactionTrace(hash: string): Record<string, number> | undefined {
  return file ? transactions.get(hash.toLowerCase()) : undefined;
}

/** Appends one job's line. */
export function traceJob(line: Record<string, unknown>): void {
  if (!file) return;
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
