/**
 * Micro run of the reservation ledger (issue 26): N reservations of one wallet, C at a time, against the stack's
 * embedded PostgreSQL, with slices (credits leased per gateway) and without (one statement on the wallet's row per
 * job). Prints, per mode, wall time and PostgreSQL execution time per reservation (pg_stat_statements), rows
 * statements. Usage: `npx tsx scripts/ledgerMicroBench.ts [N] [C]` (2000 reservations, 50 at a time).
 */
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { Address, Hex } from "viem";
import { createPool } from "../api/db/createPool.js";
import { migrate } from "../api/db/migrate.js";
import { CreditLedger } from "../api/ledger/creditLedger.js";
import { repoRoot } from "./stack/repoRoot.js";
import { startPostgres } from "./stack/startPostgres.js";

const N = Number(process.argv[2] ?? 2_000);
const C = Number(process.argv[3] ?? 50);
const PORT = 10098;
const STATE_DIR = path.join(repoRoot, ".local", "ledger-bench");
const INDEX = "bench_index";
const API = "bench_api";
const WALLET = "0x00000000000000000000000000000000000000d4" as Address;

function key(mode: string, n: number): Hex {
  return `0x${mode === "slices" ? "1" : "2"}${n.toString(16).padStart(63, "0")}`;
}

async function main(): Promise<void> {
  const conf = path.join(STATE_DIR, "postgres", "data", "postgresql.auto.conf");
  const postgres = await startPostgres({ stateDir: STATE_DIR, port: PORT, externalUrl: null });
  if (existsSync(conf) && !(await import("node:fs")).readFileSync(conf, "utf8").includes("pg_stat_statements")) {
    // First run: enable pg_stat_statements, then restart (TOOLCHAIN.md "Per-statement database cost").
    appendFileSync(conf, "\nshared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = 'all'\n");
    await postgres.stop();
    return main();
  }
  mkdirSync(STATE_DIR, { recursive: true });
  const admin = new pg.Pool({ connectionString: postgres.databaseUrl });
  admin.on("error", () => undefined);
  await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await admin.query(`DROP SCHEMA IF EXISTS ${INDEX} CASCADE`);
  await admin.query(`DROP SCHEMA IF EXISTS ${API} CASCADE`);
  await admin.query(`CREATE SCHEMA ${INDEX}`);
  await admin.query(`CREATE TABLE ${INDEX}.account (wallet text PRIMARY KEY, credits_available numeric(78) NOT NULL)`);
  await admin.query(`CREATE TABLE ${INDEX}.job (job_key text PRIMARY KEY)`);
  await admin.query(
    `CREATE TABLE ${INDEX}.api_key (key_hash text PRIMARY KEY, wallet text NOT NULL, status text NOT NULL)`,
  );
  const setup = createPool(postgres.databaseUrl, API);
  await migrate(setup, API);
  await setup.end();

  for (const mode of ["direct", "slices"] as const) {
    await admin.query(
      `TRUNCATE ${API}.ledger_wallet, ${API}.ledger_reservation, ${API}.ledger_slice, ${INDEX}.account`,
    );
    await admin.query(`INSERT INTO ${INDEX}.account VALUES ($1, $2)`, [WALLET, String(100 * N)]);
    const pool = createPool(postgres.databaseUrl, API);
    const ledger = new CreditLedger(pool, {
      indexSchema: INDEX,
      reservationTtlMs: 300_000,
      slices: mode === "slices" ? { owner: "bench", ttlMs: 15_000, idleMs: 1_000, recallWaitMs: 1_000 } : undefined,
    });
    const sweep = setInterval(() => void ledger.releaseIndexed().catch(() => undefined), 100);
    await pool.query("SELECT 1");
    await admin.query("SELECT pg_stat_statements_reset()");
    const startedAt = performance.now();
    let next = 0;
    let refused = 0;
    await Promise.all(
      Array.from({ length: C }, async () => {
        while (next < N) {
          const n = next++;
          const result = await ledger.reserve(WALLET, key(mode, n), 100n);
          if (!result.ok) refused += 1;
        }
      }),
    );
    const wallMs = performance.now() - startedAt;
    clearInterval(sweep);
    const stats = await admin.query(
      `SELECT COALESCE(SUM(total_exec_time), 0) AS exec_ms, COALESCE(SUM(calls), 0) AS calls FROM pg_stat_statements
       WHERE query ILIKE '%ledger_%' AND query NOT ILIKE '%pg_stat%'`,
    );
    const execMs = Number(stats.rows[0].exec_ms);
    console.log(
      JSON.stringify({
        mode,
        reservations: N,
        concurrency: C,
        refused,
        wallMsPerReservation: +(wallMs / N).toFixed(3),
        reservationsPerSecond: Math.round((N / wallMs) * 1000),
        pgExecMsPerReservation: +(execMs / N).toFixed(3),
        ledgerStatements: Number(stats.rows[0].calls),
      }),
    );
    await ledger.close();
    await pool.end();
  }
  await admin.end();
  await postgres.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
