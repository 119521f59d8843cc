// Issue 26 "Two writes per job": what one settled job costs PostgreSQL. Counts, over a burst of concurrent
// completions, the database's commits (`pg_stat_database.xact_commit`, every process of the stack that uses it:
// gateway, dispatcher, indexer) and the writes to the gateway's job table (`pg_stat_user_tables`), per settled job.
// The stack's idle background commits (pollers, the indexer) are measured first and taken out. Write transactions
// (those that took a transaction id) are exact; `xact_commit` also counts read-only transactions and lags by up to
// the statistics flush interval. The figures are reported; the assertions: a job's row is inserted once and written
// about three times in all (insert, close to settling, settled and final).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { openaiFor } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";

const MODEL = "qwen3-1.7b";
const JOBS = 120;
const CONCURRENCY = 20;
/** Longer than PostgreSQL's idle statistics flush (10 s). */
const STATS_SETTLE_MS = 11_000;
const IDLE_WINDOW_MS = 11_000;

type Counters = {
  at: number;
  commits: number;
  writes: number;
  jobInserts: number;
  jobUpdates: number;
  /** Rows inserted + updated + deleted per table (`schema.table`). */
  rowWrites: Map<string, number>;
};

async function counters(db: pg.Client): Promise<Counters> {
  // Each backend sends its statistics at most every second, and an idle one within 10 s (PGSTAT_IDLE_INTERVAL):
  // callers wait that long before reading.
  await db.query("SELECT pg_stat_clear_snapshot()");
  const commits = await db.query<{ xact_commit: string }>(
    "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
  );
  const table = await db.query<{ n_tup_ins: string; n_tup_upd: string }>(
    "SELECT n_tup_ins, n_tup_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'gateway_job'",
    [API_SCHEMA],
  );
  const tables = await db.query<{ name: string; n: string }>(
    `SELECT schemaname || '.' || relname AS name, (n_tup_ins + n_tup_upd + n_tup_del)::text AS n FROM pg_stat_user_tables`,
  );
  // Transactions that wrote: each took a transaction id (read-only ones take none); exact, no statistics lag.
  const xid = await db.query<{ next: string }>("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next");
  return {
    at: Date.now(),
    commits: Number(commits.rows[0]!.xact_commit),
    writes: Number(xid.rows[0]!.next),
    jobInserts: Number(table.rows[0]?.n_tup_ins ?? 0),
    jobUpdates: Number(table.rows[0]?.n_tup_upd ?? 0),
    rowWrites: new Map(tables.rows.map((row) => [row.name, Number(row.n)])),
  };
}

describe("PostgreSQL work per settled job", () => {
  let client: ClientWallet;
  let db: pg.Client;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    db = new pg.Client(stackInfo().databaseUrl);
    await db.connect();
  });
  afterAll(() => db.end());

  it("writes a settled job's row three times: inserted, closed to settling, settled", async () => {
    const openai = openaiFor(client.apiKey);
    // Warm up (key cache, worker connections) outside the measured window.
    await openai.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
    await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
    // The stack's own background commits (dispatcher and sweeper polls, the indexer) over an idle window, to take
    // out of the measured one.
    const idleFrom = await counters(db);
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
    const before = await counters(db);
    const idlePerMs = {
      commits: (before.commits - idleFrom.commits) / (before.at - idleFrom.at),
      writes: (before.writes - idleFrom.writes) / (before.at - idleFrom.at),
    };
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < JOBS) {
          next++;
          const completion = await openai.chat.completions.create({
            model: MODEL,
            messages: [{ role: "user", content: "Say something short." }],
            max_tokens: 8,
          });
          ids.push(completion.id.replace(/^chatcmpl-/, ""));
        }
      }),
    );
    await waitFor(
      "every measured job settled in the gateway's table",
      async () => {
        const settled = await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${API_SCHEMA}.gateway_job WHERE job_id = ANY($1) AND status = 'settled'`,
          [ids],
        );
        return Number(settled.rows[0]!.n) === ids.length;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
    const after = await counters(db);
    const elapsed = after.at - before.at;
    const perJob = {
      jobs: ids.length,
      commitsPerJob: (after.commits - before.commits - idlePerMs.commits * elapsed) / ids.length,
      writeTransactionsPerJob: (after.writes - before.writes - idlePerMs.writes * elapsed) / ids.length,
      idleCommitsPerSecond: idlePerMs.commits * 1000,
      gatewayJobInsertsPerJob: (after.jobInserts - before.jobInserts) / ids.length,
      gatewayJobUpdatesPerJob: (after.jobUpdates - before.jobUpdates) / ids.length,
    };
    const rowWritesPerJob = Object.fromEntries(
      [...after.rowWrites]
        .map(([name, n]) => [name, (n - (before.rowWrites.get(name) ?? 0)) / ids.length] as const)
        .filter(([, n]) => n >= 0.05)
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => [name, Math.round(n * 100) / 100]),
    );
    console.log(`[jobWrites] ${JSON.stringify({ ...perJob, rowWritesPerJob })}`);
    expect(perJob.gatewayJobInsertsPerJob).toBe(1);
    // Issue 26 "Two writes per job": 7.1-7.4 updates per job before the facts and the acknowledgement were held and
    // folded into the close (api/jobs/jobStore.ts); now the close to `settling` and the move to `settled`, which
    // carries `final` once the chain buried the settlement. The last settlement batch of the burst is never buried
    // by a later block (automine mines only on demand): the sweeper writes its `final` (2.01 seen). The bound
    // leaves room for that batch being up to 30 jobs.
    expect(perJob.gatewayJobUpdatesPerJob).toBeLessThanOrEqual(2.25);
    // 10.4 before the group commit (issue 26); what remains is mostly the ledger's and the indexer's. Part of it is
    // per batch (the transaction's row, the indexer's block), so it grows as batches shrink on a loaded machine:
    // 4.4-5.2 on a quiet one, 6.1 once with two CI lanes, 7.07 with four other test runs on the machine. The bound
    // guards against the pre-group-commit 10.4; the issue's ≤ 3 commits per job is the bench's dbCommitsPerJob.
    expect(perJob.writeTransactionsPerJob).toBeLessThanOrEqual(9);
  });
});
