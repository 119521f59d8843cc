import path from "node:path";
import pg from "pg";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import { CreditLedger, type CreditLedgerOptions, type CreditSliceOptions } from "./creditLedger.js";

// The ledger's tests run on a real PostgreSQL (the stack's embedded server, one folder and port per test file).
// The index tables are created with the columns Ponder gives indexer/ponder.schema.ts (`account`, `job`,
// `api_key`: snake_case, hex as lower-case text, bigint as numeric(78)); the ledger reads nothing else of them.
export const INDEX_SCHEMA = "index_under_test";
export const API_SCHEMA = "api_under_test";

export interface LedgerDatabase {
  /** One gateway's ledger: its own pool, as a second gateway process would have. */
  gateway(
    slices?: Partial<CreditSliceOptions>,
    reservationTtlMs?: number,
    options?: Pick<CreditLedgerOptions, "unmarkedLookupMs">,
  ): CreditLedger;
  /** The index's balance for the wallet (a deposit, or any event's balanceAfter). */
  indexBalance(wallet: Address, available: bigint): Promise<void>;
  /** What the indexer does on JobOpened: the job row, and the wallet's balanceAfter. */
  indexLock(wallet: Address, key: Hex, credits: bigint): Promise<void>;
  /** `ledger_wallet.reserved` of the wallet (0 without a row). */
  reserved(wallet: Address): Promise<bigint>;
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
}

export const SLICE_DEFAULTS: Omit<CreditSliceOptions, "owner"> = {
  ttlMs: 15_000,
  idleMs: 60_000,
  recallWaitMs: 1_000,
};

/** Starts the database for this test file and empties the tables before each test. */
export function useLedgerDatabase(port: number, folder: string): LedgerDatabase {
  let postgres: RunningPostgres;
  let admin: pg.Pool;
  const pools: pg.Pool[] = [];
  let gateways = 0;

  beforeAll(async () => {
    postgres = await startPostgres({ stateDir: path.join(repoRoot, ".local", folder), port, externalUrl: null });
    admin = new pg.Pool({ connectionString: postgres.databaseUrl });
    // The server's shutdown at the end ends idle connections; that is expected, not a test failure.
    admin.on("error", () => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS ${INDEX_SCHEMA} CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS ${API_SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA ${INDEX_SCHEMA}`);
    await admin.query(
      `CREATE TABLE ${INDEX_SCHEMA}.account (wallet text PRIMARY KEY, credits_available numeric(78) NOT NULL)`,
    );
    await admin.query(`CREATE TABLE ${INDEX_SCHEMA}.job (job_key text PRIMARY KEY)`);
    await admin.query(
      `CREATE TABLE ${INDEX_SCHEMA}.api_key (key_hash text PRIMARY KEY, wallet text NOT NULL, status text NOT NULL)`,
    );
    const pool = createPool(postgres.databaseUrl, API_SCHEMA);
    await migrate(pool, API_SCHEMA);
    await pool.end();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin?.end();
    await postgres?.stop();
  });

  beforeEach(async () => {
    await admin.query(
      `TRUNCATE ${INDEX_SCHEMA}.account, ${INDEX_SCHEMA}.job, ${INDEX_SCHEMA}.api_key, ${API_SCHEMA}.ledger_wallet,
                ${API_SCHEMA}.ledger_reservation, ${API_SCHEMA}.ledger_slice`,
    );
  });

  return {
    gateway(slices, reservationTtlMs = 300_000, options = {}) {
      const pool = createPool(postgres.databaseUrl, API_SCHEMA);
      pools.push(pool);
      gateways += 1;
      return new CreditLedger(pool, {
        indexSchema: INDEX_SCHEMA,
        reservationTtlMs,
        slices: slices && { owner: `gw-${gateways}`, ...SLICE_DEFAULTS, ...slices },
        ...options,
      });
    },
    async indexBalance(wallet, available) {
      await admin.query(
        `INSERT INTO ${INDEX_SCHEMA}.account (wallet, credits_available) VALUES ($1, $2)
         ON CONFLICT (wallet) DO UPDATE SET credits_available = EXCLUDED.credits_available`,
        [wallet.toLowerCase(), available.toString()],
      );
    },
    async indexLock(wallet, key, credits) {
      await admin.query(`INSERT INTO ${INDEX_SCHEMA}.job (job_key) VALUES ($1)`, [key.toLowerCase()]);
      await admin.query(
        `UPDATE ${INDEX_SCHEMA}.account SET credits_available = credits_available - $2 WHERE wallet = $1`,
        [wallet.toLowerCase(), credits.toString()],
      );
    },
    async reserved(wallet) {
      const { rows } = await admin.query(`SELECT reserved FROM ${API_SCHEMA}.ledger_wallet WHERE wallet = $1`, [
        wallet.toLowerCase(),
      ]);
      return rows.length === 0 ? 0n : BigInt(rows[0].reserved as string);
    },
    query: (sql, params) => admin.query(sql, params),
  };
}

export function jobKey(n: number): Hex {
  return `0x${n.toString(16).padStart(64, "0")}`;
}
