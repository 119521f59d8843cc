import { describe, expect, it, vi } from "vitest";
import type { Hex } from "viem";
import pino from "pino";
import { TransactionRevertedError } from "../chain/transactionSender.js";
import type { LockOutcome, QueuedLock } from "../chain/lockBatcher.js";
import { openEscrow, type EscrowDeps } from "./openEscrow.js";
import type { PreparedCompletion } from "./prepareCompletion.js";

// openEscrow routes a job once its lock is signed, without waiting for its row's commit (issue 26): the relay
// holds everything from the client until `recorded`. A job whose row could not be written stops like a refused lock:
// a 503, nothing charged, and its lock's credits back as soon as the chain can tell what the lock did. The chain,
// ledger and store are in-memory fakes of the ports openEscrow takes; the lock batcher is a queue whose promises each
// test settles.

const WALLET = "0x00000000000000000000000000000000000000aa" as Hex;
const BATCH_HASH = `0x${"11".repeat(32)}` as Hex;

function prepared(): PreparedCompletion {
  return {
    request: { model: "m", messages: [{ role: "user", content: "hi" }], stream: false },
    model: { id: "m", tier: "small", modelKey: `0x${"22".repeat(32)}` },
    wallet: WALLET,
    keyHash: `0x${"33".repeat(32)}`,
    promptTokens: 3,
    maxTokens: 16,
    creditsToLock: 5,
    creditsAvailable: 100,
  } as unknown as PreparedCompletion;
}

function harness(options: { insertFails: boolean; insert?: Promise<void> }) {
  const lock = {
    signed: Promise.withResolvers<Hex>(),
    sent: Promise.withResolvers<Hex>(),
    mined: Promise.withResolvers<LockOutcome>(),
  };
  for (const step of Object.values(lock)) step.promise.catch(() => undefined);
  const queued: QueuedLock = { signed: lock.signed.promise, sent: lock.sent.promise, mined: lock.mined.promise };
  const released: Hex[][] = [];
  const mined: Hex[] = [];
  const failed: Hex[] = [];
  const deps = {
    ledger: {
      reserve: vi.fn(async () => ({ ok: true as const, availableAfter: 95n })),
      release: vi.fn(async (keys: Hex[]) => void released.push(keys)),
      lockMined: vi.fn((key: Hex) => void mined.push(key)),
      available: vi.fn(async () => 100n),
      releaseIndexed: vi.fn(async () => undefined),
    },
    freshness: { caughtUpSince: vi.fn(async () => true) },
    jobs: {
      insert: vi.fn(async () => {
        await options.insert;
        if (options.insertFails) throw new Error("database down");
      }),
      update: vi.fn(async () => undefined),
    },
    locks: { enqueue: vi.fn(() => queued) },
    chain: {
      acceptedAtNow: () => 1_000n,
      nodeSilent: () => false,
      resampleClock: () => undefined,
      openJobRevertAt: vi.fn(),
      lockOutcomesOf: vi.fn(),
      failJob: vi.fn(async (jobKey: Hex) => {
        failed.push(jobKey);
        return `0x${"44".repeat(32)}` as Hex;
      }),
      sender: {},
    },
    lifecycle: { lockRefused: vi.fn(async () => undefined) },
    unconfirmedLocks: { tryAdmit: () => true, confirmed: () => undefined },
    metrics: {
      unconfirmedLockRefused: { inc: () => undefined },
      unconfirmedLockRefusedCredits: { inc: () => undefined },
    },
    config: { LOCK_MODE: "submitted" },
    chainJobTimeoutSeconds: 120,
    logger: pino({ level: "silent" }),
  } as unknown as EscrowDeps;
  return { deps, lock, released, mined, failed };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("openEscrow: routing before the row commits", () => {
  it("routes once the lock is signed, and tells the row's commit apart", async () => {
    const insert = Promise.withResolvers<void>();
    const { deps, lock } = harness({ insertFails: false, insert: insert.promise });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    const opened = await opening;
    let recorded = false;
    void opened.recorded.then(() => (recorded = true));
    await settle();
    expect(recorded).toBe(false);
    insert.resolve();
    await settle();
    expect(recorded).toBe(true);
    expect(opened.lockRefused.aborted).toBe(false);
  });
});

describe("openEscrow: the ledger's lookups of the lock", () => {
  async function openedAndSent() {
    const h = harness({ insertFails: false });
    const opening = openEscrow(h.deps, prepared());
    h.lock.signed.resolve(BATCH_HASH);
    const opened = await opening;
    h.lock.sent.resolve(BATCH_HASH);
    await settle();
    return { ...h, opened };
  }

  it("tells the ledger when the lock is mined, so its sweep looks for it in the index from then on", async () => {
    const { lock, mined, opened } = await openedAndSent();
    expect(mined).toEqual([]);
    lock.mined.resolve({ kind: "opened", balanceAfter: 95n, creditsLocked: 5n, deadline: 1_120n });
    await settle();
    expect(mined).toEqual([opened.jobKey]);
  });

  it("tells the ledger a lock not known to be mined in time may have been (the index may show it later)", async () => {
    const { lock, mined, opened } = await openedAndSent();
    lock.mined.reject(new Error("not mined within the wait"));
    await settle();
    expect(mined).toEqual([opened.jobKey]);
  });
});

describe("openEscrow: a routed job whose row did not commit", () => {
  async function openedWithoutRow() {
    const h = harness({ insertFails: true });
    const opening = openEscrow(h.deps, prepared());
    h.lock.signed.resolve(BATCH_HASH);
    const opened = await opening;
    await opened.recorded;
    return { ...h, opened };
  }

  it("is stopped with a retryable 503 before anything reaches its client", async () => {
    const { opened } = await openedWithoutRow();
    expect(opened.lockRefused.aborted).toBe(true);
    expect(opened.lockRefused.reason).toMatchObject({ code: "service_unavailable" });
  });

  it("returns the reservation at once when no node took the batch", async () => {
    const { lock, released } = await openedWithoutRow();
    expect(released).toEqual([]);
    const notSent = new Error("no node took the batch");
    lock.sent.reject(notSent);
    lock.mined.reject(notSent);
    await settle();
    expect(released).toHaveLength(1);
  });

  it("returns the reservation when the batch reverted", async () => {
    const { lock, released } = await openedWithoutRow();
    lock.sent.resolve(BATCH_HASH);
    lock.mined.reject(new TransactionRevertedError(BATCH_HASH));
    await settle();
    expect(released).toHaveLength(1);
  });

  it("fails a lock that opened, instead of holding its credits until the deadline", async () => {
    const { lock, released, failed } = await openedWithoutRow();
    lock.sent.resolve(BATCH_HASH);
    lock.mined.resolve({ kind: "opened", balanceAfter: 95n, creditsLocked: 5n, deadline: 1_120n });
    await settle();
    expect(failed).toHaveLength(1);
    expect(released).toEqual([]);
  });

  it("fails a lock that opened before the insert failed, once", async () => {
    const insert = Promise.withResolvers<void>();
    const { deps, lock, failed } = harness({ insertFails: true, insert: insert.promise });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    const opened = await opening;
    lock.sent.resolve(BATCH_HASH);
    lock.mined.resolve({ kind: "opened", balanceAfter: 95n, creditsLocked: 5n, deadline: 1_120n });
    await settle();
    expect(failed).toEqual([]);
    insert.resolve();
    await opened.recorded;
    await settle();
    expect(failed).toHaveLength(1);
  });

  it("keeps the reservation while a sent lock is not known to be mined (it may still land)", async () => {
    const { lock, released, failed } = await openedWithoutRow();
    lock.sent.resolve(BATCH_HASH);
    lock.mined.reject(new Error("not mined within the wait"));
    await settle();
    expect(released).toEqual([]);
    expect(failed).toEqual([]);
  });
});
