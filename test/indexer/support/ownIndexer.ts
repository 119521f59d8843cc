import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { startIndexer, type RunningIndexer } from "../../../scripts/stack/startIndexer.js";
import { INDEXER_TEST_PORTS, type IndexedStack } from "../../support/startIndexedStack.js";

export type OwnIndexerOptions = {
  /** The first JSON-RPC URL (`PONDER_RPC_URL`); default the stack's chain. */
  rpcUrl?: string;
  /** `PONDER_RPC_FALLBACK_URLS`. */
  fallbackUrls?: string[];
  /** A schema of its own (a fresh index from block 0); default the stack's (resumes it). */
  databaseSchema?: string;
};

/**
 * Replaces the stack's indexer by one this suite controls (its RPC endpoints, its process id), on the same port
 * so `stack.indexed` and `stack.client` keep working. Stop it before `stack.stop()`.
 */
export async function replaceIndexer(stack: IndexedStack, options: OwnIndexerOptions = {}): Promise<RunningIndexer> {
  await stack.stopIndexer();
  const fallbackUrls = options.fallbackUrls ?? [];
  return startIndexer({
    databaseUrl: stack.postgres.databaseUrl,
    databaseSchema: options.databaseSchema ?? stack.databaseSchema,
    resetSchema: options.databaseSchema !== undefined,
    rpcUrl: options.rpcUrl ?? stack.chain.rpcUrl,
    deploymentsFile: stack.deploymentsFile,
    port: INDEXER_TEST_PORTS.indexer,
    logFile: path.join(stack.stateDir, "own-indexer.log"),
    logLevel: "info",
    ...(fallbackUrls.length > 0 ? { env: { PONDER_RPC_FALLBACK_URLS: fallbackUrls.join(",") } } : {}),
  });
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) used so far by every process of the group `pgid` (Linux /proc). */
export function processGroupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the parenthesised command name: state ppid pgrp … utime(14) stime(15), 1-based overall.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Ponder's counters from `/metrics`: `name{labels}` → value, for the metric names given. */
export async function ponderCounters(indexerUrl: string, names: string[]): Promise<Map<string, number>> {
  const text = await (await fetch(`${indexerUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const counters = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-z_]+)(\{[^}]*\})?\s+([\d.e+-]+)$/.exec(line.trim());
    if (!match || !names.includes(match[1]!)) continue;
    counters.set(`${match[1]}${match[2] ?? ""}`, Number(match[3]));
  }
  return counters;
}
