import type pg from "pg";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { ISSUED_KEY_STATUSES } from "@credit-metered/client";

/** Key status as the index records it (indexer/ponder.schema.ts `api_key.status`). */
export const indexedKeyStatus = z.enum(ISSUED_KEY_STATUSES);

const keyRow = z.object({ wallet: z.string().regex(/^0x[0-9a-f]{40}$/), status: indexedKeyStatus });
const balanceRow = z.object({ available: z.coerce.bigint(), reserved: z.coerce.bigint() });
const reservedRow = z.object({ available: z.coerce.bigint() });
const countRow = z.object({ released: z.coerce.number() });

export interface CreditLedgerOptions {
  /** Postgres schema Ponder writes its tables into (the indexer's DATABASE_SCHEMA). */
  indexSchema: string;
  /**
   * A reservation the index never confirmed nor the gateway released (a gateway killed between queueing and
   * sending) is dropped after this long, so credits are never stuck.
   */
  reservationTtlMs: number;
}

export type ReserveResult = { ok: true; availableAfter: bigint } | { ok: false; available: bigint };

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain schema name: ${name}`);
  return `"${name}"`;
}

/**
 * Each wallet's spendable credits without the chain: the indexed `account.credits_available` (which already nets
 * out every indexed lock, settlement, refund, withdrawal, dispute restitution: the indexer follows each event's
 * `balanceAfter`) minus what this table holds for locks not yet indexed. Every gateway shares it through
 * PostgreSQL; a reservation is one statement, so concurrent gateways cannot both take the last credits.
 */
export class CreditLedger {
  private readonly account: string;
  private readonly job: string;
  private readonly apiKey: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: CreditLedgerOptions,
  ) {
    const schema = quoteIdent(options.indexSchema);
    this.account = `${schema}.account`;
    this.job = `${schema}.job`;
    this.apiKey = `${schema}.api_key`;
  }

  /** Credits the wallet can lock now: indexed available minus reserved (0 for a wallet the index never saw). */
  async available(wallet: Address): Promise<bigint> {
    const { rows } = await this.pool.query(
      `SELECT COALESCE((SELECT credits_available FROM ${this.account} WHERE wallet = $1), 0) AS available,
              COALESCE((SELECT reserved FROM ledger_wallet WHERE wallet = $1), 0) AS reserved`,
      [wallet.toLowerCase()],
    );
    const row = balanceRow.parse(rows[0]);
    const free = row.available - row.reserved;
    return free > 0n ? free : 0n;
  }

  /**
   * Reserves `credits` of `wallet` for the lock of `jobKey`, atomically: the wallet's row is inserted or updated
   * by one statement whose condition is re-checked on the row's newest version under its lock (ON CONFLICT DO
   * UPDATE … WHERE), so two reservations racing from two gateways are serialised and the second sees the first.
   */
  async reserve(wallet: Address, jobKey: Hex, credits: bigint): Promise<ReserveResult> {
    const address = wallet.toLowerCase();
    const { rows } = await this.pool.query(
      `WITH indexed AS (
         SELECT credits_available AS available FROM ${this.account} WHERE wallet = $1
       ), taken AS (
         INSERT INTO ledger_wallet AS l (wallet, reserved)
         SELECT $1, $2::bigint FROM indexed WHERE indexed.available >= $2::bigint
         ON CONFLICT (wallet) DO UPDATE SET reserved = l.reserved + EXCLUDED.reserved
           WHERE (SELECT available FROM indexed) - l.reserved >= EXCLUDED.reserved
         RETURNING l.reserved
       ), held AS (
         INSERT INTO ledger_reservation (job_key, wallet, credits)
         SELECT $3, $1, $2::bigint FROM taken
       )
       SELECT (SELECT available FROM indexed) - reserved AS available FROM taken`,
      [address, credits.toString(), jobKey.toLowerCase()],
    );
    if (rows.length === 1) return { ok: true, availableAfter: reservedRow.parse(rows[0]).available };
    return { ok: false, available: await this.available(wallet) };
  }

  /** Releases the reservations of these jobs (their lock was skipped, reverted or never sent). */
  async release(jobKeys: readonly Hex[]): Promise<number> {
    if (jobKeys.length === 0) return 0;
    return this.releaseWhere(
      "r.job_key = ANY($1::text[])",
      jobKeys.map((key) => key.toLowerCase()),
    );
  }

  /**
   * Releases every reservation the index now shows as a lock (its JobOpened is indexed, so `credits_available`
   * already excludes it), and those older than the TTL. `wallet` limits it to one wallet (the request path, on
   * an answer of "insufficient", so a lock indexed a moment ago is not counted twice).
   */
  async releaseIndexed(wallet?: Address): Promise<number> {
    const ttl = `${Math.ceil(this.options.reservationTtlMs)} milliseconds`;
    const where = `(EXISTS (SELECT 1 FROM ${this.job} j WHERE j.job_key = r.job_key)
                    OR r.created_at < now() - $1::interval)`;
    return wallet
      ? this.releaseWhere(`${where} AND r.wallet = $2`, ttl, wallet.toLowerCase())
      : this.releaseWhere(where, ttl);
  }

  private async releaseWhere(where: string, ...params: unknown[]): Promise<number> {
    // Rows are deleted and the wallets' totals lowered in one statement: the two never disagree.
    const { rows } = await this.pool.query(
      `WITH gone AS (
         DELETE FROM ledger_reservation r WHERE ${where} RETURNING r.wallet, r.credits
       ), totals AS (
         SELECT wallet, SUM(credits) AS credits FROM gone GROUP BY wallet
       ), lowered AS (
         UPDATE ledger_wallet l SET reserved = l.reserved - totals.credits FROM totals
         WHERE l.wallet = totals.wallet RETURNING 1
       )
       SELECT (SELECT COUNT(*) FROM gone) AS released`,
      params,
    );
    return countRow.parse(rows[0]).released;
  }

  /** Credits currently reserved, all wallets (for the metrics). */
  async reservedTotal(): Promise<bigint> {
    const { rows } = await this.pool.query("SELECT COALESCE(SUM(reserved), 0) AS available FROM ledger_wallet");
    return reservedRow.parse(rows[0]).available;
  }

  /** The key's wallet and status as the index has them; null when the index has never seen the key. */
  async keyOf(keyHash: Hex): Promise<{ wallet: Address; status: z.infer<typeof indexedKeyStatus> } | null> {
    const { rows } = await this.pool.query(`SELECT wallet, status FROM ${this.apiKey} WHERE key_hash = $1`, [
      keyHash.toLowerCase(),
    ]);
    if (rows.length === 0) return null;
    const row = keyRow.parse(rows[0]);
    return { wallet: row.wallet as Address, status: row.status };
  }
}
