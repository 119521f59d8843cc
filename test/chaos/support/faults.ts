import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { expect } from "vitest";
import { LOCAL_ACCOUNT_INDEX, localPrivateKey } from "@credit-metered/client/local";
import { isPortFree } from "../../../scripts/stack/ports.js";
import { startGateway } from "../../../scripts/stack/startGateway.js";
import { startIndexer } from "../../../scripts/stack/startIndexer.js";
import { API_SCHEMA, INDEXER_SCHEMA } from "../../../scripts/stack/startLocalStack.js";
import { startWorker } from "../../../scripts/stack/startWorkers.js";
import { escrowBalanceSheet, openJobsOnChain } from "../../support/conservationAudit.js";
import { stackInfo } from "../../support/stackInfo.js";
import { CHAOS_WORKER_DEFAULTS } from "../chaosStack.js";
import { sleep, waitFor } from "../../../scripts/stack/waitFor.js";

// Fault injection into the chaos stack's real processes, and the audit that follows each fault.

type ProcessName = "chain" | "indexer" | "gateway" | `worker${number}`;

/** Where restarted processes record their new ids, so later test files signal the live ones. */
function pidFile(): string {
  return path.join(stackInfo().stateDir, "chaos-pids.json");
}

/** Restarts of this run only: the file is keyed by the run's chain process, so an earlier run's ids never count. */
function restartedPids(): Record<string, number> {
  if (!existsSync(pidFile())) return {};
  const recorded = JSON.parse(readFileSync(pidFile(), "utf8")) as { run?: number; pids?: Record<string, number> };
  return recorded.run === stackInfo().pids.chain ? (recorded.pids ?? {}) : {};
}

function recordPid(name: ProcessName, pid: number): void {
  writeFileSync(pidFile(), JSON.stringify({ run: stackInfo().pids.chain, pids: { ...restartedPids(), [name]: pid } }));
}

/** The live process group of a stack process (the original one, or the last restart). */
export function pidOf(name: ProcessName): number {
  const restarted = restartedPids()[name];
  if (restarted !== undefined) return restarted;
  const { pids } = stackInfo();
  if (name.startsWith("worker")) return pids.workers[Number(name.slice("worker".length))]!;
  return pids[name as "chain" | "indexer" | "gateway"];
}

/** The embedded PostgreSQL: its postmaster and every backend it forked (SIGSTOP must freeze them all). */
export function postgresPids(): number[] {
  const postmaster = stackInfo().pids.postgres;
  if (postmaster === null) throw new Error("the chaos stack runs an external PostgreSQL; it cannot be signalled");
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return [postmaster, ...children];
}

/**
 * Sends `sig` to the postmaster and every backend, each once. A backend may end between the listing and its signal
 * (once the postmaster is resumed it reaps what exited meanwhile); that one needs no signal. A fresh-clone CI run
 * failed with `kill ESRCH` there, and the backends after the missing one stayed frozen. The postmaster may also fork
 * a backend between the listing and its own stop, so the listing is repeated until it names nobody new.
 */
function signalPostgres(sig: NodeJS.Signals): void {
  const signalled = new Set<number>();
  for (;;) {
    const fresh = postgresPids().filter((pid) => !signalled.has(pid));
    if (fresh.length === 0) return;
    for (const pid of fresh) {
      signalled.add(pid);
      try {
        process.kill(pid, sig);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
  }
}

/** Freezes the process group(s) for `ms` (SIGSTOP … SIGCONT); `during` runs while they are frozen. */
export async function frozenFor<T>(
  target: ProcessName | "postgres",
  ms: number,
  during: () => Promise<T> = async () => undefined as T,
): Promise<{ result: T; resumedAt: number }> {
  const signal = (sig: NodeJS.Signals) => {
    if (target === "postgres") signalPostgres(sig);
    else process.kill(-pidOf(target), sig);
  };
  const stoppedAt = Date.now();
  let result: T;
  try {
    // Inside the try: whatever a failed stop left frozen is resumed.
    signal("SIGSTOP");
    result = await during();
    await sleep(Math.max(0, ms - (Date.now() - stoppedAt)));
  } finally {
    signal("SIGCONT");
  }
  return { result, resumedAt: Date.now() };
}

/** SIGKILL to a process group (no shutdown, no flush: a crash). */
export async function crash(name: ProcessName, port: number): Promise<void> {
  try {
    process.kill(-pidOf(name), "SIGKILL");
  } catch {
    // Already gone.
  }
  await waitFor(`${name} gone from port ${port}`, () => isPortFree(port), { timeoutMs: 10_000 });
}

/** Starts the gateway again as the stack started it (same port, database, keys and settings). */
export async function restartGateway(): Promise<void> {
  const info = stackInfo();
  const gateway = await startGateway({
    port: info.ports.api,
    databaseUrl: info.databaseUrl,
    dbSchema: API_SCHEMA,
    indexerUrl: info.indexerUrl,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    gatewayPrivateKey: localPrivateKey(LOCAL_ACCOUNT_INDEX.gateway),
    workerGatewayToken: info.gatewayToken,
    env: info.gatewayEnv,
    logFile: path.join(info.stateDir, "logs", `gateway-restart-${Date.now()}.log`),
  });
  recordPid("gateway", gateway.pid);
}

/** Starts the indexer again on its schema: it resumes from its last checkpoint and catches up. */
export async function restartIndexer(): Promise<void> {
  const info = stackInfo();
  const indexer = await startIndexer({
    databaseUrl: info.databaseUrl,
    databaseSchema: INDEXER_SCHEMA,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    port: info.ports.indexer,
    logFile: path.join(info.stateDir, "logs", `indexer-restart-${Date.now()}.log`),
  });
  recordPid("indexer", indexer.pid);
}

/** Starts pool worker `index` again (already registered on chain). */
export async function restartWorker(index: number): Promise<void> {
  const info = stackInfo();
  const worker = await startWorker({
    spec: {
      privateKey: localPrivateKey(LOCAL_ACCOUNT_INDEX.firstWorker + index),
      port: info.ports.workerBase + index,
      models: info.workers[index]!.models,
      ...CHAOS_WORKER_DEFAULTS,
    },
    gatewayToken: info.gatewayToken,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    register: false,
    logFile: path.join(info.stateDir, "logs", `worker-${index}-restart-${Date.now()}.log`),
  });
  recordPid(`worker${index}`, worker.pid);
}

/** Gateway rows of jobs not closed yet (pending, processing, settling). */
export async function openGatewayRows(): Promise<{ job_id: string; status: string; escrow_tx: string | null }[]> {
  const client = new pg.Client({ connectionString: stackInfo().databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ job_id: string; status: string; escrow_tx: string | null }>(
      `SELECT job_id, status, escrow_tx FROM ${API_SCHEMA}.gateway_job WHERE status IN ('pending','processing','settling')`,
    );
    return result.rows;
  } finally {
    await client.end();
  }
}

/** One gauge of the gateway's /metrics (first sample without labels), or undefined. */
export async function gatewayGauge(name: string): Promise<number | undefined> {
  const text = await (await fetch(`${stackInfo().apiUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const line = text.split("\n").find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

export type AuditResult = { closedWithinMs: number; escrowHeld: bigint; escrowOwed: bigint };

/**
 * The conservation audit after a fault, from the chain alone (test/support/conservationAudit.ts): every job opened
 * on chain is closed, no gateway row is left open, and the escrow holds exactly Σ(available + locked) × 10,000 +
 * reserve. Waits (bounded) for recovery to close what the fault left open; returns how long that took.
 */
export async function expectConserved(boundMs = 90_000): Promise<AuditResult> {
  const started = Date.now();
  await waitFor("every job opened on chain is closed", async () => (await openJobsOnChain()).length === 0, {
    timeoutMs: boundMs,
    intervalMs: 250,
  });
  await waitFor("no gateway row left open", async () => (await openGatewayRows()).length === 0, {
    timeoutMs: Math.max(5_000, boundMs - (Date.now() - started)),
    intervalMs: 250,
  });
  const closedWithinMs = Date.now() - started;
  const sheet = await escrowBalanceSheet();
  expect(sheet.held).toBe(sheet.owed);
  expect(await openJobsOnChain()).toEqual([]);
  return { closedWithinMs, escrowHeld: sheet.held, escrowOwed: sheet.owed };
}

/** One line per fault for the run's log: what clients saw, the recovery time, the audit. */
export function report(fault: string, facts: Record<string, unknown>): void {
  console.log(
    `[chaos] ${fault}: ${JSON.stringify(facts, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}`,
  );
}
