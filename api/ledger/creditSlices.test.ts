import type { Address } from "viem";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import type { CreditLedger } from "./creditLedger.js";
import { API_SCHEMA, jobKey, useLedgerDatabase } from "./ledgerTestDatabase.js";

// Credits leased per gateway (docs/DESIGN.md "Credit slices"), each behaviour against a real PostgreSQL.
const db = useLedgerDatabase(Number(process.env.LEDGER_SLICES_TEST_PG_PORT ?? 10096), "ledger-slices-unit");

const WALLET = "0x00000000000000000000000000000000000000a1" as Address;

async function sliceCredits(): Promise<bigint[]> {
  const { rows } = await db.query(`SELECT credits FROM ${API_SCHEMA}.ledger_slice ORDER BY slice_id`);
  return rows.map((row: { credits: string }) => BigInt(row.credits));
}

/** Sweeps `ledger` every 10 ms (what main.ts does every LEDGER_SWEEP_MS) until the returned function is called. */
function sweeping(ledger: CreditLedger): () => void {
  const timer = setInterval(() => void ledger.releaseIndexed().catch(() => undefined), 10);
  return () => clearInterval(timer);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("credit slices", () => {
  it("the first slice of a wallet is exactly what the first request needs", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 1_000n);
    expect(await ledger.reserve(WALLET, jobKey(1), 10n)).toEqual({ ok: true, availableAfter: 990n });
    expect(await sliceCredits()).toEqual([10n]);
    expect(await db.reserved(WALLET)).toBe(10n);
  });

  it("a reservation of zero or fewer credits is an error, not a loop", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 1_000n);
    await expect(ledger.reserve(WALLET, jobKey(1), 0n)).rejects.toThrow(RangeError);
    await expect(ledger.reserve(WALLET, jobKey(2), -5n)).rejects.toThrow(RangeError);
    expect(await db.reserved(WALLET)).toBe(0n);
  });

  it("later slices grow with the wallet's rate, at most doubling", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100_000n);
    for (let i = 0; i < 40; i += 1) expect((await ledger.reserve(WALLET, jobKey(i), 10n)).ok).toBe(true);
    const held = await db.reserved(WALLET);
    // 40 reservations of 10 credits: takes of 10, 10, 20, 40, 80, 160, 320 (each at most twice the last and at
    // most the recent demand), so a few takes serve all and the slice holds less than twice what was used.
    expect(held).toBeGreaterThanOrEqual(400n);
    expect(held).toBeLessThan(800n);
  });

  it("a reservation the slice covers is served from memory: the wallet's row is not written", async () => {
    // The clock stands still: a slice's size follows the wallet's decaying rate, and on a slow host the
    // reservations below spread over enough time for the fifth take to come out smaller than this counts on (a CI
    // run saw one more take, 150 ms into the test).
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const ledger = db.gateway({});
      await db.indexBalance(WALLET, 100_000n);
      for (let i = 0; i < 4; i += 1) await ledger.reserve(WALLET, jobKey(i), 10n);
      const before = await db.query(`SELECT xmin::text AS version, reserved FROM ${API_SCHEMA}.ledger_wallet`);
      // Takes of 10, 10, 20 served four reservations; the fifth takes 40 (one write), the next three need none.
      await ledger.reserve(WALLET, jobKey(4), 10n);
      const taken = await db.query(`SELECT xmin::text AS version FROM ${API_SCHEMA}.ledger_wallet`);
      expect(taken.rows[0].version).not.toBe(before.rows[0].version);
      for (let i = 5; i < 8; i += 1) expect((await ledger.reserve(WALLET, jobKey(i), 10n)).ok).toBe(true);
      const after = await db.query(`SELECT xmin::text AS version FROM ${API_SCHEMA}.ledger_wallet`);
      expect(after.rows[0].version).toBe(taken.rows[0].version);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a wallet with little balance is not tied up in one gateway's slice", async () => {
    const [first, second] = [db.gateway({}), db.gateway({})];
    await db.indexBalance(WALLET, 30n);
    expect((await first.reserve(WALLET, jobKey(1), 10n)).ok).toBe(true);
    expect(await second.reserve(WALLET, jobKey(2), 20n)).toEqual({ ok: true, availableAfter: 0n });
  });

  it("a released reservation (lock skipped or never sent) goes back to the slice and serves the next request", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 10n);
    await ledger.reserve(WALLET, jobKey(1), 10n);
    expect(await ledger.release([jobKey(1)])).toBe(1);
    expect(await ledger.available(WALLET)).toBe(10n);
    expect((await ledger.reserve(WALLET, jobKey(2), 10n)).ok).toBe(true);
    expect(await db.reserved(WALLET)).toBe(10n);
  });

  it("an idle slice gives its unused credits back on the sweep", async () => {
    const ledger = db.gateway({ idleMs: 30 });
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 40n);
    await ledger.reserve(WALLET, jobKey(2), 20n);
    await ledger.release([jobKey(2)]);
    await sleep(50);
    await ledger.releaseIndexed();
    // The unused 20 went back; the 40 of the lock not yet indexed stay held.
    expect(await db.reserved(WALLET)).toBe(40n);
    expect(await sliceCredits()).toEqual([40n]);
  });

  it("a lock the index shows shrinks its slice on the sweep, so it is not counted twice", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await db.indexLock(WALLET, jobKey(1), 30n);
    ledger.lockMined(jobKey(1));
    // Between indexing and the sweep the lock counts twice: conservative, never over-granting.
    expect(await ledger.available(WALLET)).toBe(40n);
    expect(await ledger.releaseIndexed()).toBe(1);
    expect(await ledger.available(WALLET)).toBe(70n);
    expect(await db.reserved(WALLET)).toBe(0n);
  });

  it("the timer's sweep looks in the index only for locks the gateway saw mined", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await ledger.reserve(WALLET, jobKey(2), 20n);
    await db.indexLock(WALLET, jobKey(1), 30n);
    await db.indexLock(WALLET, jobKey(2), 20n);
    ledger.lockMined(jobKey(1));
    // Both are indexed: only the one marked mined was looked for, and the other still counts (conservatively).
    expect(await ledger.releaseIndexed()).toBe(1);
    expect(await ledger.available(WALLET)).toBe(30n);
  });

  it("a lock whose mining the gateway never learnt of is looked for once it is unmarkedLookupMs old", async () => {
    // The clock stands still until the test moves it: on a loaded host the statements between the reservation and
    // the first sweep took more than 50 ms once (a CI run), so the first sweep already looked the lock up.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const ledger = db.gateway({}, undefined, { unmarkedLookupMs: 50 });
      await db.indexBalance(WALLET, 100n);
      await ledger.reserve(WALLET, jobKey(1), 30n);
      await db.indexLock(WALLET, jobKey(1), 30n);
      expect(await ledger.releaseIndexed()).toBe(0);
      vi.setSystemTime(Date.now() + 60);
      expect(await ledger.releaseIndexed()).toBe(1);
      expect(await ledger.available(WALLET)).toBe(70n);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a request short of its wallet's credits looks up every lock of the wallet, mined or not, before it is refused", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 60n);
    await db.indexLock(WALLET, jobKey(1), 60n);
    // 40 remain on chain; the slice still counts the 60 of the unmarked lock until the wallet's sweep finds it.
    const result = await ledger.reserve(WALLET, jobKey(2), 40n);
    expect(result.ok).toBe(true);
  });

  it("a peer short of the wallet's credits makes a gateway look up its locks of the wallet, mined or not, and is served", async () => {
    const holder = db.gateway({});
    const asker = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await holder.reserve(WALLET, jobKey(1), 60n);
    await db.indexLock(WALLET, jobKey(1), 60n);
    const stop = sweeping(holder);
    try {
      // The holder never saw its lock mined: only the asker's wanted_at makes its sweep look the lock up.
      expect(await asker.reserve(WALLET, jobKey(2), 40n)).toMatchObject({ ok: true });
    } finally {
      stop();
    }
  });

  it("a reservation in a slice that nobody confirmed or released expires after its TTL, so credits are never stuck", async () => {
    const ledger = db.gateway({ idleMs: 30 }, 50);
    await db.indexBalance(WALLET, 10n);
    await ledger.reserve(WALLET, jobKey(1), 10n);
    await sleep(100);
    await ledger.releaseIndexed();
    expect(await db.reserved(WALLET)).toBe(0n);
    expect(await ledger.available(WALLET)).toBe(10n);
  });

  it("a dead gateway's slice returns after its TTL", async () => {
    const dead = db.gateway({ ttlMs: 100 });
    const live = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await dead.reserve(WALLET, jobKey(1), 60n);
    expect(await live.available(WALLET)).toBe(40n);
    await sleep(150);
    await live.releaseIndexed();
    expect(await db.reserved(WALLET)).toBe(0n);
    expect(await live.available(WALLET)).toBe(100n);
  });

  it("a request whose credits sit unused in a live peer's slice waits for the peer to give them back", async () => {
    const holder = db.gateway({});
    const asker = db.gateway({ recallWaitMs: 2_000 });
    await db.indexBalance(WALLET, 100n);
    await holder.reserve(WALLET, jobKey(1), 100n);
    await holder.release([jobKey(1)]);
    const stop = sweeping(holder);
    try {
      const startedAt = Date.now();
      expect(await asker.reserve(WALLET, jobKey(2), 50n)).toMatchObject({ ok: true });
      expect(Date.now() - startedAt).toBeLessThan(1_000);
    } finally {
      stop();
    }
  });

  it("error: a request the credits are not there for is refused after one sweep of the peers, with what is available", async () => {
    const holder = db.gateway({});
    const asker = db.gateway({});
    await db.indexBalance(WALLET, 30n);
    await holder.reserve(WALLET, jobKey(1), 10n);
    const stop = sweeping(holder);
    try {
      const startedAt = Date.now();
      expect(await asker.reserve(WALLET, jobKey(2), 40n)).toEqual({ ok: false, available: 20n });
      // Not the whole recall wait (1 s): the peer's sweep settles that its slice has nothing to give back.
      expect(Date.now() - startedAt).toBeLessThan(500);
    } finally {
      stop();
    }
  });

  it("an idle gateway's timer sweep runs no statement: nothing of its own to renew or release", async () => {
    const ledger = db.gateway({ idleMs: 0 });
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 10n);
    await ledger.release([jobKey(1)]);
    // The idle slice gives its credits back, then its empty row goes.
    await ledger.releaseIndexed();
    await ledger.releaseIndexed();
    expect(await sliceCredits()).toEqual([]);
    // The clock stands still: the idle sweep (IDLE_SWEEP_MS after the last) is due again after a second, and under
    // load the twenty calls once took longer than that.
    vi.useFakeTimers({ toFake: ["Date"] });
    const queries = vi.spyOn(pg.Pool.prototype, "query");
    try {
      for (let i = 0; i < 20; i += 1) expect(await ledger.releaseIndexed()).toBe(0);
      expect(queries).not.toHaveBeenCalled();
    } finally {
      queries.mockRestore();
      vi.useRealTimers();
    }
  });

  it("a request the slice covers learns the wallet's credits from memory: no statement, the figure available says", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await ledger.release([jobKey(1)]);
    const queries = vi.spyOn(pg.Pool.prototype, "query");
    let said: bigint;
    try {
      said = await ledger.availableFor(WALLET, 30n);
      expect(queries).not.toHaveBeenCalled();
    } finally {
      queries.mockRestore();
    }
    expect(said).toBe(100n);
    expect(await ledger.available(WALLET)).toBe(100n);
  });

  it("a request no slice covers takes its slice in one statement, and its reservation then runs none", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    const queries = vi.spyOn(pg.Pool.prototype, "query");
    try {
      expect(await ledger.availableFor(WALLET, 30n)).toBe(100n);
      expect(queries).toHaveBeenCalledTimes(1);
      expect(await ledger.reserve(WALLET, jobKey(1), 30n)).toEqual({ ok: true, availableAfter: 70n });
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
    }
    expect(await sliceCredits()).toEqual([30n]);
  });

  it("error: a request the wallet cannot cover takes nothing and gets available's answer", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 20n);
    expect(await ledger.availableFor(WALLET, 30n)).toBe(20n);
    expect(await sliceCredits()).toEqual([]);
  });

  it("a request the slice does not cover gets available's answer from the database", async () => {
    const [ledger, peer] = [db.gateway({}), db.gateway({})];
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await ledger.release([jobKey(1)]);
    // A peer reserved 50 since: only the statement sees it.
    await peer.reserve(WALLET, jobKey(2), 50n);
    expect(await ledger.availableFor(WALLET, 31n)).toBe(50n);
  });

  it("close gives every slice's unused part back and keeps what locks in flight hold", async () => {
    const ledger = db.gateway({});
    await db.indexBalance(WALLET, 100n);
    await ledger.reserve(WALLET, jobKey(1), 30n);
    await ledger.reserve(WALLET, jobKey(2), 30n);
    await ledger.release([jobKey(2)]);
    await ledger.close();
    expect(await db.reserved(WALLET)).toBe(30n);
  });
});
