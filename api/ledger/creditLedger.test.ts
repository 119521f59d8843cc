import path from "node:path";
import pg from "pg";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import { CreditLedger } from "./creditLedger.js";

// A real PostgreSQL (the stack's embedded server, its own folder and port). The index tables are created with
// the columns Ponder gives indexer/ponder.schema.ts (`account`, `job`, `api_key`: snake_case, hex as lower-case
// text, bigint as numeric(78)); the ledger reads nothing else of them.
const PORT = Number(process.env.LEDGER_TEST_PG_PORT ?? 10095);
const STATE_DIR = path.join(repoRoot, ".local", "ledger-unit");
const INDEX_SCHEMA = "index_under_test";
const API_SCHEMA = "api_under_test";

const WALLET = "0x00000000000000000000000000000000000000a1" as Address;
const OTHER = "0x00000000000000000000000000000000000000b2" as Address;

let postgres: RunningPostgres;
const pools: pg.Pool[] = [];
let admin: pg.Pool;

function jobKey(n: number): Hex {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

/** One gateway's view: its own pool, as a second gateway process would have. */
function gatewayLedger(ttlMs = 300_000): CreditLedger {
  const pool = createPool(postgres.databaseUrl, API_SCHEMA);
  pools.push(pool);
  return new CreditLedger(pool, { indexSchema: INDEX_SCHEMA, reservationTtlMs: ttlMs });
}

async function indexDeposit(wallet: Address, available: bigint): Promise<void> {
  await admin.query(
    `INSERT INTO ${INDEX_SCHEMA}.account (wallet, credits_available) VALUES ($1, $2)
     ON CONFLICT (wallet) DO UPDATE SET credits_available = EXCLUDED.credits_available`,
    [wallet.toLowerCase(), available.toString()],
  );
}

/** What the indexer does on JobOpened: the job row, and the wallet's balanceAfter. */
async function indexLock(wallet: Address, key: Hex, credits: bigint): Promise<void> {
  await admin.query(`INSERT INTO ${INDEX_SCHEMA}.job (job_key) VALUES ($1)`, [key]);
  await admin.query(`UPDATE ${INDEX_SCHEMA}.account SET credits_available = credits_available - $2 WHERE wallet = $1`, [
    wallet.toLowerCase(),
    credits.toString(),
  ]);
}

beforeAll(async () => {
  postgres = await startPostgres({ stateDir: STATE_DIR, port: PORT, externalUrl: null });
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
    `TRUNCATE ${INDEX_SCHEMA}.account, ${INDEX_SCHEMA}.job, ${INDEX_SCHEMA}.api_key, ${API_SCHEMA}.ledger_wallet, ${API_SCHEMA}.ledger_reservation`,
  );
});

describe("CreditLedger", () => {
  it("available is the indexed balance minus what is reserved", async () => {
    const ledger = gatewayLedger();
    await indexDeposit(WALLET, 100n);
    expect(await ledger.available(WALLET)).toBe(100n);
    expect(await ledger.reserve(WALLET, jobKey(1), 30n)).toEqual({ ok: true, availableAfter: 70n });
    expect(await ledger.available(WALLET)).toBe(70n);
    expect(await ledger.available(OTHER)).toBe(0n);
  });

  it("refuses a reservation beyond what is available and reserves nothing for it", async () => {
    const ledger = gatewayLedger();
    await indexDeposit(WALLET, 50n);
    await ledger.reserve(WALLET, jobKey(1), 40n);
    expect(await ledger.reserve(WALLET, jobKey(2), 11n)).toEqual({ ok: false, available: 10n });
    expect(await ledger.reserve(OTHER, jobKey(3), 1n)).toEqual({ ok: false, available: 0n });
    const { rows } = await admin.query(`SELECT job_key FROM ${API_SCHEMA}.ledger_reservation`);
    expect(rows.map((row: { job_key: string }) => row.job_key)).toEqual([jobKey(1)]);
  });

  it("two gateways racing for the same credits never reserve more than the wallet has", async () => {
    const [first, second] = [gatewayLedger(), gatewayLedger()];
    await indexDeposit(WALLET, 20n);
    const attempts = Array.from({ length: 60 }, (_, i) =>
      (i % 2 === 0 ? first : second).reserve(WALLET, jobKey(i), 1n),
    );
    const results = await Promise.all(attempts);
    expect(results.filter((result) => result.ok)).toHaveLength(20);
    expect(await first.available(WALLET)).toBe(0n);
    const { rows } = await admin.query(`SELECT reserved FROM ${API_SCHEMA}.ledger_wallet WHERE wallet = $1`, [
      WALLET.toLowerCase(),
    ]);
    expect(rows[0].reserved).toBe("20");
  });

  it("release gives a skipped or unsent lock's credits back at once", async () => {
    const ledger = gatewayLedger();
    await indexDeposit(WALLET, 10n);
    await ledger.reserve(WALLET, jobKey(1), 10n);
    expect(await ledger.release([jobKey(1)])).toBe(1);
    expect(await ledger.available(WALLET)).toBe(10n);
    expect(await ledger.release([jobKey(1)])).toBe(0);
    expect(await ledger.available(WALLET)).toBe(10n);
  });

  it("a lock the index shows is released once, and its credits are counted by the index alone", async () => {
    const ledger = gatewayLedger();
    await indexDeposit(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await ledger.reserve(WALLET, jobKey(2), 20n);
    await indexLock(WALLET, jobKey(1), 30n);
    // Between indexing and release the lock counts twice: conservative, never over-granting.
    expect(await ledger.available(WALLET)).toBe(20n);
    expect(await ledger.releaseIndexed()).toBe(1);
    expect(await ledger.available(WALLET)).toBe(50n);
    expect(await ledger.releaseIndexed()).toBe(0);
  });

  it("releaseIndexed for one wallet leaves other wallets' reservations alone", async () => {
    const ledger = gatewayLedger();
    await indexDeposit(WALLET, 10n);
    await indexDeposit(OTHER, 10n);
    await ledger.reserve(WALLET, jobKey(1), 5n);
    await ledger.reserve(OTHER, jobKey(2), 5n);
    await indexLock(WALLET, jobKey(1), 5n);
    await indexLock(OTHER, jobKey(2), 5n);
    expect(await ledger.releaseIndexed(WALLET)).toBe(1);
    expect(await ledger.available(WALLET)).toBe(5n);
    expect(await ledger.available(OTHER)).toBe(0n);
  });

  it("a reservation nobody confirmed or released expires after its TTL, so credits are never stuck", async () => {
    const ledger = gatewayLedger(50);
    await indexDeposit(WALLET, 10n);
    await ledger.reserve(WALLET, jobKey(1), 10n);
    expect(await ledger.available(WALLET)).toBe(0n);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await ledger.releaseIndexed()).toBe(1);
    expect(await ledger.available(WALLET)).toBe(10n);
  });

  it("keyOf answers the indexed wallet and status, or null for a key the index has not seen", async () => {
    const ledger = gatewayLedger();
    const keyHash = jobKey(77);
    expect(await ledger.keyOf(keyHash)).toBeNull();
    await admin.query(`INSERT INTO ${INDEX_SCHEMA}.api_key VALUES ($1, $2, 'revoked')`, [keyHash, WALLET]);
    expect(await ledger.keyOf(keyHash)).toEqual({ wallet: WALLET, status: "revoked" });
  });
});
