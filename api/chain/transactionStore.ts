import type pg from "pg";
import type { Address, Hex } from "viem";
import type { Fees } from "./feeOracle.js";
import { pgArray } from "../db/pgArray.js";

/** One tracked transaction as it is kept across restarts: the version broadcast now and every hash at its nonce. */
export interface StoredTransaction {
  nonce: number;
  /** What the call does (the contract function), or the purpose of the call it stood for before it became a no-op. */
  purpose: string;
  filler: boolean;
  /** Signed bytes of the version broadcast now; the call, gas and fees are read back from them. */
  raw: Hex;
  fees: Fees;
  /** Every version signed at this nonce, oldest first. */
  hashes: Hex[];
  sentAt: number;
  replacedAt?: number;
}

/** What the transaction manager needs of its durable record (api/chain/transactionManager.ts). */
export interface TransactionLog {
  /** This signer's unfinished transactions, by nonce. */
  load(): Promise<StoredTransaction[]>;
  /** Writes the row in the next group commit (this tick's); resolves once it is committed. */
  save(transaction: StoredTransaction): Promise<void>;
  /** Deletes the row in the next group commit; nobody waits for it (`flush` does). */
  remove(nonce: number): void;
  /** Commits what is queued now, in one statement. */
  flush(): Promise<void>;
}

type Queued = { kind: "save"; row: StoredTransaction } | { kind: "remove" };

interface Waiting {
  op: Queued;
  waiters: PromiseWithResolvers<void>[];
}

/**
 * The `gateway_transaction` rows of one signer on one chain (migration 045). Writes are group-committed: saves made
 * in the same tick of the event loop, and the removals the manager's watch queued during its pass, leave as one
 * statement (one commit) — on the hot path that is one insert per lock or settlement batch, written before its bytes
 * leave for a node, and one statement per watch pass for the replacements and finalised transactions. The last write
 * queued for a nonce wins, so a removal and a save of the same nonce never race each other in the database.
 */
export class TransactionStore implements TransactionLog {
  private queued = new Map<number, Waiting>();
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly signer: string;

  constructor(
    private readonly pool: Pick<pg.Pool, "query">,
    private readonly chainId: number,
    signer: Address,
  ) {
    this.signer = signer.toLowerCase();
  }

  async load(): Promise<StoredTransaction[]> {
    const result = await this.pool.query<{
      nonce: string;
      purpose: string;
      filler: boolean;
      raw: string;
      max_fee: string;
      max_tip: string;
      hashes: string[];
      sent_ms: number;
      replaced_ms: number | null;
    }>(
      `SELECT nonce::text, purpose, filler, encode(raw, 'hex') AS raw, max_fee_per_gas::text AS max_fee,
              max_priority_fee_per_gas::text AS max_tip, hashes,
              (extract(epoch FROM sent_at) * 1000)::float8 AS sent_ms,
              (extract(epoch FROM replaced_at) * 1000)::float8 AS replaced_ms
         FROM gateway_transaction WHERE chain_id = $1 AND signer = $2 ORDER BY nonce`,
      [this.chainId, this.signer],
    );
    return result.rows.map((row) => ({
      nonce: Number(row.nonce),
      purpose: row.purpose,
      filler: row.filler,
      raw: `0x${row.raw}`,
      fees: { maxFeePerGas: BigInt(row.max_fee), maxPriorityFeePerGas: BigInt(row.max_tip) },
      hashes: row.hashes as Hex[],
      sentAt: Math.round(row.sent_ms),
      ...(row.replaced_ms === null ? {} : { replacedAt: Math.round(row.replaced_ms) }),
    }));
  }

  save(row: StoredTransaction): Promise<void> {
    const waiter = this.enqueue(row.nonce, { kind: "save", row });
    if (!this.scheduled) {
      this.scheduled = true;
      // Saves made in the same tick (a lock batch and a settlement batch signed together) share one commit.
      setImmediate(() => {
        this.scheduled = false;
        void this.flush().catch(() => undefined);
      });
    }
    return waiter.promise;
  }

  remove(nonce: number): void {
    // Nobody waits for a removal: a failed one is queued again for the next commit.
    void this.enqueue(nonce, { kind: "remove" }).promise.catch(() => undefined);
  }

  flush(): Promise<void> {
    const run = this.writing.then(() => this.write());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private enqueue(nonce: number, op: Queued): PromiseWithResolvers<void> {
    const waiter = Promise.withResolvers<void>();
    const waiting = this.queued.get(nonce);
    if (waiting) {
      waiting.op = op;
      waiting.waiters.push(waiter);
    } else this.queued.set(nonce, { op, waiters: [waiter] });
    return waiter;
  }

  private async write(): Promise<void> {
    if (this.queued.size === 0) return;
    const batch = this.queued;
    this.queued = new Map();
    const removed: string[] = [];
    const saved: StoredTransaction[] = [];
    for (const [nonce, { op }] of batch) {
      if (op.kind === "remove") removed.push(String(nonce));
      else saved.push(op.row);
    }
    try {
      // Removals and saves name different nonces (the last write per nonce won), so one statement does both.
      await this.pool.query(
        `WITH gone AS (
           DELETE FROM gateway_transaction WHERE chain_id = $1 AND signer = $2 AND nonce = ANY($3::bigint[])
         )
         INSERT INTO gateway_transaction AS t (chain_id, signer, nonce, purpose, filler, raw, max_fee_per_gas,
                                              max_priority_fee_per_gas, hashes, sent_at, replaced_at)
         SELECT $1, $2, r.nonce, r.purpose, r.filler, decode(r.raw, 'hex'), r.max_fee, r.max_tip,
                string_to_array(r.hashes, ','), to_timestamp(r.sent_ms / 1000.0), to_timestamp(r.replaced_ms / 1000.0)
           FROM unnest($4::bigint[], $5::text[], $6::boolean[], $7::text[], $8::numeric[], $9::numeric[], $10::text[],
                       $11::float8[], $12::float8[])
                AS r(nonce, purpose, filler, raw, max_fee, max_tip, hashes, sent_ms, replaced_ms)
         ON CONFLICT (chain_id, signer, nonce) DO UPDATE SET
           purpose = EXCLUDED.purpose, filler = EXCLUDED.filler, raw = EXCLUDED.raw,
           max_fee_per_gas = EXCLUDED.max_fee_per_gas, max_priority_fee_per_gas = EXCLUDED.max_priority_fee_per_gas,
           hashes = EXCLUDED.hashes, sent_at = EXCLUDED.sent_at, replaced_at = EXCLUDED.replaced_at`,
        [
          this.chainId,
          this.signer,
          pgArray(removed),
          pgArray(saved.map((row) => String(row.nonce))),
          pgArray(saved.map((row) => row.purpose)),
          pgArray(saved.map((row) => row.filler)),
          pgArray(saved.map((row) => row.raw.slice(2))),
          pgArray(saved.map((row) => row.fees.maxFeePerGas.toString())),
          pgArray(saved.map((row) => row.fees.maxPriorityFeePerGas.toString())),
          pgArray(saved.map((row) => row.hashes.join(","))),
          pgArray(saved.map((row) => row.sentAt)),
          pgArray(saved.map((row) => row.replacedAt ?? null)),
        ],
      );
    } catch (error) {
      for (const [nonce, waiting] of batch) {
        waiting.waiters.forEach((waiter) => waiter.reject(error));
        // A removal is retried with the next commit unless a newer write for its nonce is queued already.
        if (waiting.op.kind === "remove" && !this.queued.has(nonce)) this.remove(nonce);
      }
      throw error;
    }
    for (const waiting of batch.values()) waiting.waiters.forEach((waiter) => waiter.resolve());
  }
}
