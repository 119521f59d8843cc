import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { round } from "./stats.js";

/**
 * PostgreSQL's idle backends publish their counters at most every 10 s (PGSTAT_IDLE_INTERVAL; busy ones every 1 s):
 * a reading taken this long after a window's load has every commit of that window in it.
 */
export const STATS_FLUSH_MS = 11_000;

/**
 * Commits of the stack's database (`pg_stat_database.xact_commit`: every process of the stack — each gateway, the
 * indexer — commits there). One connection of its own; each reading is itself one commit, which `commitsSince`
 * takes off, so the figure holds only what the stack committed.
 */
export class CommitCounter {
  private readonly client: pg.Client;
  private readings = 0;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async open(databaseUrl: string): Promise<CommitCounter> {
    const client = new pg.Client({ connectionString: databaseUrl, statement_timeout: 5_000, query_timeout: 5_000 });
    await client.connect();
    return new CommitCounter(client);
  }

  /** A reading: the database's commits so far and this counter's own readings so far (this one included). */
  async read(): Promise<{ commits: number; readings: number }> {
    const { rows } = await this.client.query<{ commits: string }>(
      "SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()",
    );
    this.readings++;
    return { commits: Number(rows[0]?.commits ?? 0), readings: this.readings };
  }

  /** The stack's commits between two readings (this counter's own readings between them taken off). */
  static between(before: { commits: number; readings: number }, after: { commits: number; readings: number }) {
    return after.commits - before.commits - (after.readings - before.readings);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/**
 * Turns on `pg_stat_statements` in the bench stack's embedded cluster: the library must be preloaded when the
 * server starts, so it goes into the data folder's `postgresql.auto.conf` before the stack starts its server (a
 * cluster that does not exist yet is initialised here first, by the stack's own `startPostgres`, and stopped).
 * The extension itself is created in the stack's database afterwards (`DbBreakdown.open`), since the stack drops and
 * recreates that database at every start.
 */
export async function preloadStatementStats(stateDir: string, port: number): Promise<void> {
  const dataDir = path.join(stateDir, "postgres", "data");
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    const { startPostgres } = await import("../scripts/stack/startPostgres.js");
    mkdirSync(stateDir, { recursive: true });
    const server = await startPostgres({ stateDir, port, externalUrl: null });
    await server.stop();
  }
  const file = path.join(dataDir, "postgresql.auto.conf");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (/^shared_preload_libraries\s*=.*pg_stat_statements/m.test(text)) return;
  writeFileSync(
    file,
    `${text.replace(/\n?$/, "\n")}shared_preload_libraries = 'pg_stat_statements'\n` +
      `pg_stat_statements.track = 'all'\npg_stat_statements.max = 2000\n`,
  );
}

/** The client processes whose database work is told apart: each a name and its processes (a service's tree). */
export type DbClientGroup = { name: string; pids: () => number[] };

type BackendSample = { client: string; cpuSeconds: number };
type TableSample = Map<string, { inserts: number; updates: number; deletes: number }>;
const TOP_STATEMENTS = 12;
type Snapshot = { backends: Map<number, BackendSample>; tables: TableSample };

/** One statement's work per settled job (pg_stat_statements over a window). */
export type StatementCost = {
  /** Who sends it: `indexer` (Ponder's own tables and its sync store), `dispatcher` (webhook tables), `gateway`. */
  client: string;
  query: string;
  callsPerJob: number;
  rowsPerJob: number;
  /** Execution time (planning excluded), ms per job. */
  execMsPerJob: number;
  /** WAL records written, per job: what a statement costs beyond its execution (commit, checkpoint, vacuum). */
  walRecordsPerJob: number;
};

/** PostgreSQL's work per settled job over a window, by statement, by table and by client process. */
export type DbBreakdownResult = {
  /** Every statement's execution time summed, ms per job (the part of Postgres CPU spent executing statements). */
  execMsPerJob: number;
  /** Statements executed per job (every client; BEGIN/COMMIT included). */
  statementsPerJob: number;
  /** The statements costing most execution time per job, most first (up to 12). */
  topStatements: StatementCost[];
  /** Rows written per job by table (schema.table), most first (tables with at least 0.05 writes per job). */
  tables: { table: string; insertsPerJob: number; updatesPerJob: number; deletesPerJob: number }[];
  /**
   * Backend CPU ms per job by the client process at the other end of the connection (`gateway 0`, `indexer`, …,
   * with Ponder's pool after a colon), plus Postgres's own processes (`background`: WAL writer, checkpointer,
   * autovacuum…). Backends that ended inside the window are missing (their CPU is in `postgres` of cpuMsPerJob).
   */
  cpuMsPerJobByClient: Record<string, number>;
};

/**
 * Reads what PostgreSQL did in a window and attributes it: per statement (`pg_stat_statements`, reset at the start),
 * per table (`pg_stat_user_tables` deltas) and per client process (each backend's CPU from `/proc`, its client found
 * by the connection's port). One connection of its own, which is `bench` in the per-client figures.
 */
export class DbBreakdown {
  private constructor(
    private readonly client: pg.Client,
    private readonly port: number,
    private readonly groups: DbClientGroup[],
    readonly statements: boolean,
  ) {}

  static async open(databaseUrl: string, groups: DbClientGroup[]): Promise<DbBreakdown> {
    const client = new pg.Client({ connectionString: databaseUrl, statement_timeout: 10_000, query_timeout: 10_000 });
    await client.connect();
    let statements = false;
    try {
      await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      await client.query("SELECT 1 FROM pg_stat_statements LIMIT 1");
      statements = true;
    } catch {
      // Not preloaded (a stack the bench did not start): tables and clients only.
    }
    return new DbBreakdown(client, Number(new URL(databaseUrl).port || 5432), groups, statements);
  }

  /** The window starts: statement counters reset, tables' and backends' counters read. */
  async start(): Promise<Snapshot> {
    if (this.statements) await this.client.query("SELECT pg_stat_statements_reset()");
    return this.snapshot();
  }

  /**
   * The window's statements and backend CPU ÷ `jobs` (read at once: both are current), and `tablesSince` for the
   * table counters, which need STATS_FLUSH_MS after the load to be complete.
   */
  async finish(from: Snapshot, jobs: number): Promise<Omit<DbBreakdownResult, "tables"> | null> {
    if (jobs <= 0) return null;
    const to = await this.snapshot(false);
    const per = (value: number, digits = 2) => round(value / jobs, digits);
    let execMs = 0;
    let calls = 0;
    let topStatements: StatementCost[] = [];
    if (this.statements) {
      const { rows } = await this.client.query<{
        query: string;
        calls: string;
        rows: string;
        exec_ms: number;
        wal_records: string;
      }>(
        `SELECT query, calls::text, rows::text, total_exec_time AS exec_ms, wal_records::text
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND query NOT LIKE '%pg_stat%'`,
      );
      // The same text from several roles or nesting levels is one statement here.
      const merged = new Map<string, { calls: number; rows: number; execMs: number; wal: number }>();
      for (const row of rows) {
        const text = row.query.replace(/\s+/g, " ").trim();
        const entry = merged.get(text) ?? { calls: 0, rows: 0, execMs: 0, wal: 0 };
        entry.calls += Number(row.calls);
        entry.rows += Number(row.rows);
        entry.execMs += row.exec_ms;
        entry.wal += Number(row.wal_records);
        merged.set(text, entry);
        execMs += row.exec_ms;
        calls += Number(row.calls);
      }
      topStatements = [...merged]
        .sort((a, b) => b[1].execMs - a[1].execMs)
        .slice(0, TOP_STATEMENTS)
        .map(([query, entry]) => ({
          client: clientOfStatement(query),
          query: query.length > 160 ? `${query.slice(0, 157)}...` : query,
          callsPerJob: per(entry.calls),
          rowsPerJob: per(entry.rows),
          execMsPerJob: per(entry.execMs, 3),
          walRecordsPerJob: per(entry.wal),
        }));
    }
    const byClient = new Map<string, number>();
    for (const [pid, now] of to.backends) {
      const used = now.cpuSeconds - (from.backends.get(pid)?.cpuSeconds ?? 0);
      byClient.set(now.client, (byClient.get(now.client) ?? 0) + used);
    }
    const cpuMsPerJobByClient = Object.fromEntries(
      [...byClient]
        .sort((a, b) => b[1] - a[1])
        .map(([name, seconds]) => [name, per(seconds * 1000)] as const)
        .filter(([, ms]) => ms > 0),
    );
    return { execMsPerJob: per(execMs, 3), statementsPerJob: per(calls, 1), topStatements, cpuMsPerJobByClient };
  }

  /** Rows written per job by table since `from` (read STATS_FLUSH_MS after the load). */
  async tablesSince(from: Snapshot, jobs: number): Promise<DbBreakdownResult["tables"]> {
    if (jobs <= 0) return [];
    const to = await this.snapshot(true);
    const per = (value: number) => round(value / jobs, 2);
    const written = (row: { insertsPerJob: number; updatesPerJob: number; deletesPerJob: number }) =>
      row.insertsPerJob + row.updatesPerJob + row.deletesPerJob;
    return [...to.tables]
      .map(([table, now]) => {
        const before = from.tables.get(table) ?? { inserts: 0, updates: 0, deletes: 0 };
        return {
          table,
          insertsPerJob: per(now.inserts - before.inserts),
          updatesPerJob: per(now.updates - before.updates),
          deletesPerJob: per(now.deletes - before.deletes),
        };
      })
      .filter((row) => written(row) >= 0.05)
      .sort((a, b) => written(b) - written(a));
  }

  private async snapshot(withTables = true): Promise<Snapshot> {
    const tables: TableSample = new Map();
    if (!withTables) return { backends: await this.backends(), tables };
    const { rows: tableRows } = await this.client.query<{
      name: string;
      ins: string;
      upd: string;
      del: string;
    }>(
      `SELECT schemaname || '.' || relname AS name, n_tup_ins::text AS ins, n_tup_upd::text AS upd,
              n_tup_del::text AS del FROM pg_stat_user_tables`,
    );
    for (const row of tableRows)
      tables.set(row.name, { inserts: Number(row.ins), updates: Number(row.upd), deletes: Number(row.del) });
    return { backends: await this.backends(), tables };
  }

  /** Each backend's CPU so far and its client (the group holding the other end of its connection). */
  private async backends(): Promise<Map<number, BackendSample>> {
    const { rows: backendRows } = await this.client.query<{
      pid: number;
      port: number | null;
      app: string | null;
      type: string;
    }>("SELECT pid, client_port AS port, application_name AS app, backend_type AS type FROM pg_stat_activity");
    const groupOfInode = this.groupsBySocket();
    const clientOfPort = this.clientsByPort(groupOfInode);
    const peerOfInode = unixSocketPeers();
    const backends = new Map<number, BackendSample>();
    for (const row of backendRows) {
      let client = "background";
      if (row.type === "client backend") {
        // client_port -1: a Unix-socket connection (the stack's own processes use the server's socket).
        const owner =
          (row.port !== null && row.port >= 0
            ? clientOfPort.get(row.port)
            : socketInodesOf(row.pid)
                .map((inode) => groupOfInode.get(peerOfInode.get(inode) ?? ""))
                .find((group) => group !== undefined)) || "other";
        client = row.app ? `${owner}:${row.app}` : owner;
      }
      backends.set(row.pid, { client, cpuSeconds: ownCpuSeconds(row.pid) });
    }
    return backends;
  }

  /** The inode of every socket a watched group's processes hold → the group's name. */
  private groupsBySocket(): Map<string, string> {
    const groupOfInode = new Map<string, string>();
    for (const group of [...this.groups, { name: "bench", pids: () => [process.pid] }])
      for (const pid of group.pids()) for (const inode of socketInodesOf(pid)) groupOfInode.set(inode, group.name);
    return groupOfInode;
  }

  /** Local port of each TCP connection to the server → the name of the group whose process holds its socket. */
  private clientsByPort(groupOfInode: Map<string, string>): Map<number, string> {
    const byPort = new Map<number, string>();
    for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      let text = "";
      try {
        text = readFileSync(file, "utf8");
      } catch {
        continue;
      }
      for (const line of text.split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields.length < 10) continue;
        const localPort = parseInt(fields[1]!.split(":")[1]!, 16);
        const remotePort = parseInt(fields[2]!.split(":")[1]!, 16);
        const group = groupOfInode.get(fields[9]!);
        if (remotePort === this.port && group) byPort.set(localPort, group);
      }
    }
    return byPort;
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/**
 * The inodes of the sockets a process holds besides its standard streams (none when it is gone). Every Postgres
 * backend inherits the postmaster's stdin, stdout and stderr, which are socket pairs to the process that started the
 * server (Node's pipes are Unix socket pairs): counted, they named that process, the bench, as every backend's
 * client in `bench/run.ts`.
 */
function socketInodesOf(pid: number): string[] {
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    if (Number(fd) <= 2) continue;
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.push(match[1]!);
    } catch {
      // Closed meanwhile.
    }
  }
  return inodes;
}

/**
 * Each connected Unix socket's inode → its peer's inode, from `ss -xn` (the kernel tells peers only over netlink,
 * not in /proc/net/unix). Empty when `ss` is missing: Unix-socket clients then count as "other".
 */
function unixSocketPeers(): Map<string, string> {
  const peers = new Map<string, string>();
  let text = "";
  try {
    text = execFileSync("ss", ["-xn"], { encoding: "utf8", timeout: 5_000, maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return peers;
  }
  // Netid State Recv-Q Send-Q Local-Address Local-Inode Peer-Address Peer-Inode
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 8 && fields[7] !== "0") peers.set(fields[5]!, fields[7]!);
  }
  return peers;
}

/** A backend's own CPU seconds (utime + stime; a backend has no children). 0 when it is gone. */
function ownCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * Which client sends a statement, from what it touches: the webhook tables are the dispatcher's (it runs in the
 * gateway process), the ledger's and jobs' tables the gateway's (some also read the index), Ponder's own tables, its
 * sync store and the index's schema the indexer's (the bench stack's index schema is `chain_index`).
 */
function clientOfStatement(query: string): string {
  if (/^(BEGIN|COMMIT|ROLLBACK|SET|SAVEPOINT|RELEASE)\b/i.test(query)) return "any";
  if (/webhook_|credit_low_state|wallet_settings/i.test(query)) return "dispatcher";
  if (/ledger_|gateway_|idempotency_record/i.test(query)) return "gateway";
  if (/ponder|chain_index|live_query|_reorg__|operation_id/i.test(query)) return "indexer";
  return "gateway";
}
