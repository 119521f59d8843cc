import { appendFileSync } from "node:fs";

/**
 * Opt-in timing of a job's way to its first token (issue 26): with `GATEWAY_PHASE_TRACE=<file>` each routed job
 * appends one JSON line of its phase durations before routing (ms) to the file, and one (`mode: "relay"`) from
 * routing to its first token, for finding where the added time to first token goes. Off (the default) every call
 * is a no-op costing one branch.
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

/** Marks of one job's relay, ms since it was routed; written as one line at its first token. */
export interface RelayTrace {
  mark(phase: "picked" | "ack" | "token" | "recorded"): void;
  write(): void;
}

// With tracing off every job shares this one, so the relay allocates nothing for it.
const relayTraceOff: RelayTrace = { mark() {}, write() {} };

/** `startedAt`: when the gateway started the job (Date.now()), for the time it took to be routed. */
export function startRelayTrace(startedAt: number): RelayTrace {
  if (!file) return relayTraceOff;
  const routedAt = performance.now();
  const marks: Record<string, number> = {};
  return {
    mark(phase) {
      marks[phase] ??= performance.now() - routedAt;
    },
    write() {
      traceJob({ mode: "relay", routed: Date.now() - startedAt - marks.recorded!, ...marks });
    },
  };
}
