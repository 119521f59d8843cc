import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Address, Hex } from "viem";
import { z } from "zod";
import { ISSUED_KEY_STATUSES } from "@credit-metered/client";
import { CreditSlice } from "./creditSlice.js";
import { pgArray } from "../db/pgArray.js";

/** Key status as the index records it (indexer/ponder.schema.ts `api_key.status`). */
export const indexedKeyStatus = z.enum(ISSUED_KEY_STATUSES);

const keyRow = z.object({ wallet: z.string().regex(/^0x[0-9a-f]{40}$/), status: indexedKeyStatus });
const balanceRow = z.object({
  available: z.coerce.bigint(),
  reserved: z.coerce.bigint(),
  lent: z.coerce.bigint(),
});
const reservedRow = z.object({ available: z.coerce.bigint() });
const countRow = z.object({ released: z.coerce.number() });
const probeRow = z.object({ bound: z.coerce.bigint(), settled: z.boolean(), at: z.date(), asked: z.boolean() });
const sweepRow = z.object({ kind: z.enum(["renewed", "indexed", "released", "wanted"]), id: z.string() });

export interface CreditLedgerOptions {
  /** Postgres schema Ponder writes its tables into (the indexer's DATABASE_SCHEMA). */
  indexSchema: string;
  /**
   * A reservation the index never confirmed nor the gateway released (a gateway killed between queueing and
   * sending) is dropped after this long, so credits are never stuck.
   */
  reservationTtlMs: number;
  /** Credits leased per gateway; without it every reservation is one statement on the wallet's row. */
  slices?: CreditSliceOptions;
  /**
   * A timer's sweep with nothing of this gateway's to renew or release runs at most this often (default
   * IDLE_SWEEP_MS): only for other gateways' leftovers (a dead gateway's expired slices and reservation rows).
   */
  idleSweepMs?: number;
  /** A reservation in flight whose lock the gateway did not see mined is looked for after this long (UNMARKED_LOOKUP_MS). */
  unmarkedLookupMs?: number;
}

export interface CreditSliceOptions {
  /** This gateway's id (a random suffix makes each ledger instance a distinct owner). */
  owner: string;
  /** A slice not renewed for this long is deleted by any gateway and its credits return (a dead gateway's). */
  ttlMs: number;
  /** A slice unused for this long gives its unused part back on the next sweep. */
  idleMs: number;
  /** How long a request that no slice or the ledger can cover waits for peers to give slices back. */
  recallWaitMs: number;
  /** A peer's slice counts as recallable while it was renewed within this long (its owner is alive). */
  peerFreshMs?: number;
}

export type ReserveResult = { ok: true; availableAfter: bigint } | { ok: false; available: bigint };

/** The index's table of API keys (indexer/ponder.schema.ts `apiKey`), read to authenticate completions. */
export const INDEX_KEY_TABLE = "api_key";

/** While a peer asks for a wallet's credits (and for this long after), a slice of it stays as small as requests. */
const CONTENDED_MS = 1_000;
/**
 * An idle gateway's sweep (no slice, no reservation row of its own) runs this often instead of every
 * LEDGER_SWEEP_MS: what it can still find is another gateway's leftovers, which wait for their TTL anyway (15 s for
 * a slice, minutes for a reservation), so a second more costs nothing, and the idle stack stops committing a sweep
 * statement ten times a second per gateway.
 */
export const IDLE_SWEEP_MS = 1_000;
/**
 * A sweep looks in the index for a reservation in flight once its lock was mined (`lockMined`) or it is this old
 * whatever the gateway learnt, then less and less often while the index does not show it (CreditSlice.inflightEntries),
 * and always when a peer is short of its wallet's credits (`wanted_at`, seen by the sweep's own statement, so the
 * renewal a waiting peer counts on always looked) or this gateway is (a sweep for the wallet). Looking for every
 * reservation in flight at every sweep cost most of the sweep: 100 jobs/s on automine with the index a few seconds
 * behind left about 1,000 keys in flight, each looked up ten times a second (1,842 buffer reads and 9 ms per sweep)
 * to find about 10 (issue 26).
 */
const UNMARKED_LOOKUP_MS = 5_000;
/** Between two attempts of a request waiting for peers' slices. */
const RECALL_POLL_MS = 25;

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain schema name: ${name}`);
  return `"${name}"`;
}

function interval(ms: number): string {
  return `${Math.ceil(ms)} milliseconds`;
}

/**
 * Each wallet's spendable credits without the chain: the indexed `account.credits_available` (which already nets
 * out every indexed lock, settlement, refund, withdrawal, dispute restitution: the indexer follows each event's
 * `balanceAfter`) minus `ledger_wallet.reserved`: what is held for locks not yet indexed, as reservation rows
 * (direct path) or as slices leased to gateways. Every gateway shares it through PostgreSQL; taking credits is one
 * statement re-checked under the wallet row's lock, so concurrent gateways cannot both take the last credits.
 *
 * With `slices`, a gateway takes a slice of a wallet's credits in one statement and serves reservations from
 * memory (docs/DESIGN.md "Credit slices"); the sweep (`releaseIndexed`, every LEDGER_SWEEP_MS) renews its slices,
 * shrinks them by the reservations the index now shows, and gives back the unused part of idle or wanted ones.
 */
export class CreditLedger {
  private readonly account: string;
  private readonly job: string;
  private readonly apiKey: string;
  private readonly owner: string;
  /** This gateway's slices, by wallet, and the slice each in-memory reservation came from, by job key. */
  private readonly slices = new Map<string, CreditSlice>();
  private readonly sliceOfKey = new Map<string, CreditSlice>();
  private sliceSeq = 0;
  /** Job keys of reservation rows this ledger wrote (direct path) and has not seen go: a sweep must look at them. */
  private readonly directKeys = new Set<string>();
  /** When an idle sweep (nothing of this gateway's to do) is due next. */
  private idleSweepAt = 0;
  private closed = false;
  private sweeping: Promise<number> | undefined;
  private sweepQueued: Promise<number> | undefined;
  /** Wallets the next sweep looks up every reservation in flight of, mined or not (a request about to be refused). */
  private readonly lookUpAll = new Set<string>();
  /** Set while a sweep statement runs: takes wait (a take and a sweep lock a wallet row and a slice row in
   *  opposite orders; run together by one owner they could deadlock). */
  private sweepGate: Promise<void> | undefined;
  private readonly takesInFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: CreditLedgerOptions,
  ) {
    const schema = quoteIdent(options.indexSchema);
    this.account = `${schema}.account`;
    this.job = `${schema}.job`;
    this.apiKey = `${schema}.${INDEX_KEY_TABLE}`;
    this.owner = `${options.slices?.owner ?? "ledger"}/${randomUUID().slice(0, 8)}`;
  }

  /**
   * Credits the wallet can lock now: indexed available minus what is held, plus what this gateway's slice and its
   * live peers' slices hold unused (0 for a wallet the index never saw).
   */
  async available(wallet: Address): Promise<bigint> {
    const address = wallet.toLowerCase();
    const { rows } = await this.pool.query(
      `SELECT COALESCE((SELECT credits_available FROM ${this.account} WHERE wallet = $1), 0) AS available,
              COALESCE((SELECT reserved FROM ledger_wallet WHERE wallet = $1), 0) AS reserved,
              COALESCE((SELECT SUM(free) FROM ledger_slice WHERE wallet = $1 AND owner <> $2
                          AND renewed_at > now() - $3::interval AND expires_at > now()), 0) AS lent`,
      [address, this.owner, interval(this.peerFreshMs)],
    );
    const row = balanceRow.parse(rows[0]);
    const slice = this.slices.get(address);
    const own = slice?.usable(Date.now()) ? slice.free : 0n;
    const free = row.available - row.reserved + row.lent + own;
    return free > 0n ? free : 0n;
  }

  /**
   * `available` for a request that needs `credits` (its escrow estimate): when this gateway's slice of the wallet
   * alone holds that many unused (what `reserve` would serve them from, without a statement), the answer comes from
   * memory: the figure `reserve` reports (`outside + free`), which covers the request. Otherwise the slice first
   * takes what `reserve` would take for the request (one statement), and answers the same way when that covers it.
   * Failing that, `available`: so a request is sized down or refused only on `available`'s own answer, never on the
   * slice's (issue 26: before, every request ran `available`'s statement although its reservation then came from
   * the slice).
   */
  async availableFor(wallet: Address, credits: bigint): Promise<bigint> {
    if (!this.options.slices || this.closed) return this.available(wallet);
    const now = Date.now();
    const slice = this.sliceFor(wallet.toLowerCase(), now);
    if (slice.free >= credits && slice.usable(now)) return slice.outside + slice.free;
    // The take `reserve` would make for this request, made now: when it covers the request, its figure is the
    // answer and the reservation that follows is served from memory. Before, a request the slice did not cover ran
    // `available`'s statement and then the take, two statements where one does (issue 26: at light load, most
    // requests of a wallet find its slice given back). A take that fails answers nothing: `available` does.
    if (!slice.taking && (slice.held === 0n || slice.usable(now))) {
      const taking = this.take(slice, slice.want(credits - slice.free, now), credits);
      slice.taking = taking;
      try {
        await taking;
      } finally {
        if (slice.taking === taking) slice.taking = undefined;
      }
      if (slice.free >= credits && slice.usable(Date.now())) return slice.outside + slice.free;
    }
    return this.available(wallet);
  }

  /**
   * Reserves `credits` of `wallet` for the lock of `jobKey`. From this gateway's slice when it covers them (no
   * statement); otherwise the slice takes more (sizing rule: CreditSlice.want); when the ledger cannot cover even
   * what the request lacks while live peers' slices hold credits of the wallet, they are asked to give their unused
   * part back and the request waits for it (at most `recallWaitMs`). Refused only when the credits are not there.
   */
  async reserve(wallet: Address, jobKey: Hex, credits: bigint): Promise<ReserveResult> {
    // Every lock costs something (the catalog refuses zero prices). A figure of zero would never need a take, and
    // a slice not yet usable would send the loop below round without an await that waits for anything.
    if (credits <= 0n) throw new RangeError(`a reservation must be positive, got ${credits} credits`);
    const address = wallet.toLowerCase();
    const key = jobKey.toLowerCase();
    if (!this.options.slices || this.closed) return this.reserveDirect(address, key, credits);
    const deadline = Date.now() + this.options.slices.recallWaitMs;
    for (;;) {
      const now = Date.now();
      const slice = this.sliceFor(address, now);
      if (slice.serve(key, credits, now)) {
        this.sliceOfKey.set(key, slice);
        return { ok: true, availableAfter: slice.outside + slice.free };
      }
      // A slice whose renewals fail is not safe to add to (its row may expire): the direct path serves meanwhile.
      if (slice.held > 0n && !slice.usable(now)) return this.reserveDirect(address, key, credits);
      if (slice.taking) {
        await slice.taking.catch(() => undefined);
        continue;
      }
      const taking = this.takeFor(slice, credits, deadline);
      slice.taking = taking;
      let outcome: "taken" | "retry" | "refused";
      try {
        outcome = await taking;
      } finally {
        if (slice.taking === taking) slice.taking = undefined;
      }
      if (outcome === "refused") return { ok: false, available: await this.available(wallet) };
    }
  }

  /**
   * The lock of this job was mined (or may have been: no receipt in time): the sweep looks for it in the index from
   * now on, so it stops counting its credits twice. Before, it looks only after UNMARKED_LOOKUP_MS.
   */
  lockMined(jobKey: Hex): void {
    const key = jobKey.toLowerCase();
    this.sliceOfKey.get(key)?.lockMined(key, Date.now());
  }

  /** Releases the reservations of these jobs (their lock was skipped, reverted or never sent). */
  async release(jobKeys: readonly Hex[]): Promise<number> {
    let released = 0;
    const stored: string[] = [];
    for (const jobKey of jobKeys) {
      const key = jobKey.toLowerCase();
      const slice = this.sliceOfKey.get(key);
      // A reservation served from a slice goes back to the slice (its idle part returns on a later sweep).
      if (slice?.release(key) !== undefined) {
        this.sliceOfKey.delete(key);
        released += 1;
      } else stored.push(key);
    }
    if (stored.length === 0) return released;
    const gone = await this.releaseWhere("r.job_key = ANY($1::text[])", stored);
    for (const key of stored) this.directKeys.delete(key);
    return released + gone;
  }

  /**
   * The sweep. Releases every reservation the index now shows as a lock (its JobOpened is indexed, so
   * `credits_available` already excludes it) and those older than the TTL; renews this gateway's slices, shrinks
   * them by their reservations the index shows, gives back the unused part of idle or wanted ones, and deletes
   * any gateway's expired slices. `wallet` limits the release of reservation rows to one wallet (the request path,
   * on an answer of "insufficient", so a lock indexed a moment ago is not counted twice).
   *
   * Without `wallet` (the timer's call) and with nothing of this gateway's to renew or release (no slice, no
   * reservation row it wrote), it runs no statement at all unless `idleSweepMs` passed since the last sweep.
   */
  async releaseIndexed(wallet?: Address): Promise<number> {
    // Nothing due: still wait for a sweep in flight, so a caller's "swept" never precedes one that already started.
    if (wallet === undefined && !this.sweepDue(Date.now()))
      return this.sweeping
        ? this.sweeping.then(
            () => 0,
            () => 0,
          )
        : 0;
    return this.sweep(wallet?.toLowerCase());
  }

  /** Whether a timer's sweep has anything to do: this gateway's own slices or rows, or the idle interval passed. */
  private sweepDue(now: number): boolean {
    return this.slices.size > 0 || this.directKeys.size > 0 || now >= this.idleSweepAt;
  }

  /** Gives back the unused part of every slice and serves later reservations by the direct path (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    await this.sweep().catch(() => undefined);
  }

  private get peerFreshMs(): number {
    return this.options.slices?.peerFreshMs ?? 1_000;
  }

  private sliceFor(wallet: string, now: number): CreditSlice {
    let slice = this.slices.get(wallet);
    if (!slice) {
      this.sliceSeq += 1;
      slice = new CreditSlice(`${this.owner}/${this.sliceSeq}`, wallet, now);
      this.slices.set(wallet, slice);
    }
    return slice;
  }

  /**
   * Takes enough into `slice` for `credits`: what the sizing rule wants, else exactly what is lacking, else asks
   * live peers for their unused part and tries again until `deadline`.
   */
  private async takeFor(slice: CreditSlice, credits: bigint, deadline: number): Promise<"taken" | "retry" | "refused"> {
    const need = credits - slice.free;
    if (need <= 0n) return "retry";
    const want = slice.want(need, Date.now());
    const first = await this.take(slice, want, credits);
    if (first !== "refused") return first;
    if (want > need) {
      const second = await this.take(slice, need, credits);
      if (second !== "refused") return second;
    }
    let askedAt: Date | null = null;
    let asked = false;
    for (;;) {
      await this.sweep(slice.wallet).catch(() => 0);
      const lacking = credits - slice.free;
      if (lacking <= 0n) return "retry";
      const again = await this.take(slice, lacking, credits);
      if (again !== "refused") return again;
      if (Date.now() >= deadline) return "refused";
      const probe = await this.gated(() => this.probeAndAsk(slice.wallet, lacking, askedAt));
      // Peers' renewals count from a probe that began after the ask committed: a sweep that began before it might
      // not have seen the ask, and so not have looked up the wallet's unmarked locks.
      if (asked) askedAt ??= probe.at;
      asked ||= probe.asked;
      // Refused at once when even every peer's unused part and every lock in flight would not cover the request (no
      // ask: nothing a peer can give back would); otherwise only once every live peer holding credits of the wallet
      // swept since the ask (its locks the index shows no longer count twice) and their unused parts do not cover it.
      if (!probe.asked || (probe.bound < lacking && probe.settled)) return "refused";
      await new Promise((resolve) => setTimeout(resolve, RECALL_POLL_MS));
    }
  }

  /** One statement: `grant` more credits into the slice if the wallet has them, counted in `reserved`. */
  private async take(slice: CreditSlice, grant: bigint, credits: bigint): Promise<"taken" | "retry" | "refused"> {
    const sliceOptions = this.options.slices!;
    const startedAt = Date.now();
    const unused = slice.free + grant - credits;
    const freeAfter = unused > 0n ? unused : 0n;
    const rows = await this.gated(async () => {
      // The slice may have been dropped by a sweep meanwhile: its holder starts a new one.
      if (this.slices.get(slice.wallet) !== slice) return undefined;
      const { rows } = await this.pool.query(
        `WITH indexed AS (
           SELECT credits_available AS available FROM ${this.account} WHERE wallet = $1
         ), taken AS (
           INSERT INTO ledger_wallet AS l (wallet, reserved)
           SELECT $1, $2::bigint FROM indexed WHERE indexed.available >= $2::bigint
           ON CONFLICT (wallet) DO UPDATE SET reserved = l.reserved + EXCLUDED.reserved
             WHERE (SELECT available FROM indexed) - l.reserved >= EXCLUDED.reserved
           RETURNING l.reserved
         ), sliced AS (
           INSERT INTO ledger_slice AS s (slice_id, wallet, owner, credits, free, expires_at)
           SELECT $3, $1, $4, $2::bigint, $6::bigint, now() + $5::interval FROM taken
           ON CONFLICT (slice_id) DO UPDATE SET credits = s.credits + EXCLUDED.credits, free = EXCLUDED.free,
             renewed_at = now(), expires_at = EXCLUDED.expires_at
         )
         SELECT (SELECT available FROM indexed) - reserved AS available FROM taken`,
        // `free` as peers see it: what stays unused once the request that asked for the take is served.
        [slice.wallet, grant.toString(), slice.id, this.owner, interval(sliceOptions.ttlMs), freeAfter.toString()],
      );
      return rows;
    });
    if (rows === undefined) return "retry";
    if (rows.length !== 1) return "refused";
    slice.held += grant;
    slice.lastGrant = grant;
    slice.outside = reservedRow.parse(rows[0]).available;
    // Local lease: half the TTL from before the statement, so the row outlives every serve from it.
    slice.validUntil = Math.max(slice.validUntil, startedAt + sliceOptions.ttlMs / 2);
    return "taken";
  }

  /**
   * What the wallet could give this request if live peers gave the unused part of their slices back (`bound`), and
   * whether every live peer slice of the wallet was renewed (swept) since `since` (never, without one). When the
   * bound covers `need`, marks the wallet wanted so the peers give back on their next sweep.
   */
  private async probeAndAsk(
    wallet: string,
    need: bigint,
    since: Date | null,
  ): Promise<{ bound: bigint; settled: boolean; at: Date; asked: boolean }> {
    // Asked when the request would fit if the peers gave back their unused part and their locks the index already
    // shows (their in-flight part, `credits - free`): a peer looks those up only for a wallet that is wanted.
    // Never settled before there is a `since` (a probe after the ask committed): "since now" was wrong under load, as
    // now() is this statement's start, and a peer's renewal that began after it but committed before its snapshot
    // looked like a sweep since the ask, though it never saw one. A CI run refused a request that way, with the
    // peer's lock indexed and the credits there (creditSlices.test.ts, "a peer short of the wallet's credits").
    const { rows } = await this.pool.query(
      `WITH peers AS (
         SELECT free, credits, renewed_at FROM ledger_slice
         WHERE wallet = $1 AND owner <> $2 AND renewed_at > now() - $3::interval AND expires_at > now()
       ), probe AS (
         SELECT COALESCE((SELECT credits_available FROM ${this.account} WHERE wallet = $1), 0)
              - COALESCE((SELECT reserved FROM ledger_wallet WHERE wallet = $1), 0)
              + COALESCE((SELECT SUM(free) FROM peers), 0) AS bound,
                COALESCE((SELECT SUM(credits - free) FROM peers), 0) AS inflight,
                $5::timestamptz IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM peers WHERE credits > 0 AND renewed_at <= $5::timestamptz) AS settled,
                now() AS at
       ), asked AS (
         UPDATE ledger_wallet SET wanted_at = now()
         WHERE wallet = $1 AND (SELECT bound + inflight FROM probe) >= $4::bigint
         RETURNING 1
       )
       SELECT bound, settled, at, EXISTS (SELECT 1 FROM asked) AS asked FROM probe`,
      [wallet, this.owner, interval(this.peerFreshMs), need.toString(), since],
    );
    return probeRow.parse(rows[0]);
  }

  /** Runs a take's statement unless a sweep statement of this ledger is running (then after it). */
  private async gated<T>(statement: () => Promise<T>): Promise<T> {
    while (this.sweepGate) await this.sweepGate;
    const running = statement();
    this.takesInFlight.add(running);
    try {
      return await running;
    } finally {
      this.takesInFlight.delete(running);
    }
  }

  /**
   * One sweep at a time; a call during one is served by the next (coalesced). A call for a wallet (a request short of
   * its credits) makes that sweep look up every reservation in flight of the wallet, mined or not.
   */
  private sweep(wallet?: string): Promise<number> {
    if (wallet !== undefined) this.lookUpAll.add(wallet);
    if (!this.sweeping) {
      this.sweeping = this.runSweep(wallet).finally(() => {
        this.sweeping = undefined;
      });
      return this.sweeping;
    }
    this.sweepQueued ??= this.sweeping
      .catch(() => 0)
      .then(() => {
        this.sweepQueued = undefined;
        return this.sweep();
      });
    return this.sweepQueued;
  }

  private async runSweep(wallet: string | undefined): Promise<number> {
    const sliceOptions = this.options.slices;
    const startedAt = Date.now();
    this.idleSweepAt = startedAt + (this.options.idleSweepMs ?? IDLE_SWEEP_MS);
    const plan: { slice: CreditSlice; giveBack: bigint }[] = [];
    const inflight: { slice: CreditSlice; key: string; credits: bigint; marked: boolean }[] = [];
    const dropped: string[] = [];
    const lookUpAll = new Set(this.lookUpAll);
    this.lookUpAll.clear();
    const unmarkedBefore = startedAt - (this.options.unmarkedLookupMs ?? UNMARKED_LOOKUP_MS);
    for (const slice of this.slices.values()) {
      const idle = sliceOptions !== undefined && startedAt - slice.lastUsedAt >= sliceOptions.idleMs;
      if (idle && slice.held === 0n && slice.inflight.size === 0 && !slice.taking) {
        // Nothing held, nothing used lately: the row goes (a later request starts a new slice).
        this.slices.delete(slice.wallet);
        dropped.push(slice.id);
        continue;
      }
      for (const key of slice.expire(startedAt - this.options.reservationTtlMs)) {
        if (this.sliceOfKey.get(key) === slice) this.sliceOfKey.delete(key);
      }
      // Nothing to renew yet (its first take has not committed): left out, not mistaken for an expired row.
      if (slice.held === 0n) continue;
      const giveBack = idle || this.closed || startedAt < slice.contendedUntil ? slice.free : 0n;
      slice.returning += giveBack;
      plan.push({ slice, giveBack });
      const all = lookUpAll.has(slice.wallet);
      for (const [key, credits, marked] of slice.inflightEntries(startedAt, unmarkedBefore))
        inflight.push({ slice, key, credits, marked: all || marked });
    }

    let rows: z.infer<typeof sweepRow>[];
    let open = () => {};
    this.sweepGate = new Promise<void>((resolve) => {
      open = resolve;
    });
    try {
      await Promise.allSettled([...this.takesInFlight]);
      const result = await this.pool.query(
        `WITH inflight AS (
           SELECT * FROM unnest($8::text[], $9::text[], $10::bigint[], $13::boolean[], $14::text[])
             AS f(slice_id, job_key, credits, marked, wallet)
         ), indexed AS (
           SELECT f.slice_id, f.job_key, f.credits FROM inflight f
           WHERE (f.marked OR f.wallet IN (SELECT wallet FROM ledger_wallet WHERE wanted_at > now() - $12::interval))
             AND EXISTS (SELECT 1 FROM ${this.job} j WHERE j.job_key = f.job_key)
         ), plan AS (
           SELECT p.slice_id, p.free,
                  p.give_back + COALESCE((SELECT SUM(i.credits) FROM indexed i WHERE i.slice_id = p.slice_id), 0) AS lower
           FROM unnest($5::text[], $6::bigint[], $7::bigint[]) AS p(slice_id, give_back, free)
         ), renewed AS (
           UPDATE ledger_slice s SET credits = s.credits - plan.lower, free = plan.free, renewed_at = now(),
             expires_at = now() + $2::interval
           FROM plan WHERE s.slice_id = plan.slice_id AND s.owner = $1 AND s.expires_at > now()
           RETURNING s.slice_id, s.wallet, plan.lower AS credits
         ), expired AS (
           DELETE FROM ledger_slice s WHERE s.expires_at <= now() RETURNING s.wallet, s.credits
         ), dropped AS (
           DELETE FROM ledger_slice s
           WHERE s.slice_id = ANY($11::text[]) AND s.owner = $1 AND s.credits = 0 AND s.expires_at > now()
         ), released AS (
           DELETE FROM ledger_reservation r
           WHERE (EXISTS (SELECT 1 FROM ${this.job} j WHERE j.job_key = r.job_key) OR r.created_at < now() - $3::interval)
             AND ($4::text IS NULL OR r.wallet = $4::text)
           RETURNING r.wallet, r.credits, r.job_key
         ), totals AS (
           SELECT wallet, SUM(credits) AS credits FROM (
             SELECT wallet, credits FROM renewed UNION ALL SELECT wallet, credits FROM expired
             UNION ALL SELECT wallet, credits FROM released
           ) moved GROUP BY wallet
         ), lowered AS (
           UPDATE ledger_wallet l SET reserved = l.reserved - totals.credits FROM totals
           WHERE l.wallet = totals.wallet AND totals.credits > 0
         )
         SELECT 'renewed' AS kind, slice_id AS id FROM renewed
         UNION ALL SELECT 'indexed', job_key FROM indexed WHERE slice_id IN (SELECT slice_id FROM renewed)
         UNION ALL SELECT 'released', job_key FROM released
         UNION ALL SELECT 'wanted', l.wallet FROM ledger_wallet l
           WHERE l.wanted_at > now() - $12::interval AND l.wallet IN (SELECT wallet FROM renewed)`,
        [
          this.owner,
          interval(sliceOptions?.ttlMs ?? 0),
          interval(this.options.reservationTtlMs),
          wallet ?? null,
          pgArray(plan.map((entry) => entry.slice.id)),
          pgArray(plan.map((entry) => entry.giveBack.toString())),
          pgArray(plan.map((entry) => entry.slice.free.toString())),
          pgArray(inflight.map((entry) => entry.slice.id)),
          pgArray(inflight.map((entry) => entry.key)),
          pgArray(inflight.map((entry) => entry.credits.toString())),
          pgArray(dropped),
          interval(CONTENDED_MS),
          pgArray(inflight.map((entry) => String(entry.marked))),
          pgArray(inflight.map((entry) => entry.slice.wallet)),
        ],
      );
      rows = result.rows.map((row) => sweepRow.parse(row));
    } catch (error) {
      for (const { slice, giveBack } of plan) slice.returning -= giveBack;
      throw error;
    } finally {
      this.sweepGate = undefined;
      open();
    }

    const renewed = new Set<string>();
    const indexed = new Set<string>();
    const wanted = new Set<string>();
    let released = 0;
    for (const row of rows) {
      if (row.kind === "renewed") renewed.add(row.id);
      else if (row.kind === "indexed") indexed.add(row.id);
      else if (row.kind === "wanted") wanted.add(row.id);
      else {
        released += 1;
        this.directKeys.delete(row.id);
      }
    }
    for (const { slice, giveBack } of plan) {
      slice.returning -= giveBack;
      if (renewed.has(slice.id)) {
        slice.held -= giveBack;
        slice.validUntil = startedAt + (sliceOptions?.ttlMs ?? 0) / 2;
      } else this.discard(slice);
    }
    for (const { slice, key, credits } of inflight) {
      if (!indexed.has(key) || !renewed.has(slice.id)) continue;
      slice.indexed(key, credits);
      if (this.sliceOfKey.get(key) === slice) this.sliceOfKey.delete(key);
    }
    let giveBackSoon = false;
    for (const address of wanted) {
      const slice = this.slices.get(address);
      if (!slice) continue;
      slice.contendedUntil = Date.now() + CONTENDED_MS;
      if (slice.free > 0n) giveBackSoon = true;
    }
    // A peer waits for these credits: give them back now rather than at the next tick.
    if (giveBackSoon) void this.sweep().catch(() => 0);
    return released + indexed.size;
  }

  /** A slice whose row is gone (expired while renewals failed): its credits came back to the wallet already. */
  private discard(slice: CreditSlice): void {
    if (this.slices.get(slice.wallet) === slice) this.slices.delete(slice.wallet);
    for (const key of slice.inflight.keys()) if (this.sliceOfKey.get(key) === slice) this.sliceOfKey.delete(key);
  }

  /** The direct path: one statement on the wallet's row and a reservation row per job. */
  private async reserveDirect(address: string, key: string, credits: bigint): Promise<ReserveResult> {
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
      [address, credits.toString(), key],
    );
    if (rows.length === 1) {
      this.directKeys.add(key);
      return { ok: true, availableAfter: reservedRow.parse(rows[0]).available };
    }
    return { ok: false, available: await this.available(address as Address) };
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
