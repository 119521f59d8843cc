import { describe, expect, it, vi } from "vitest";
import type { Hex } from "viem";
import pino from "pino";
import { TransactionRevertedError } from "../chain/transactionSender.js";
import type { LockOutcome, QueuedLock } from "../chain/lockBatcher.js";
import { openEscrow, type EscrowDeps } from "./openEscrow.js";
import type { PreparedCompletion } from "./prepareCompletion.js";

// openEscrow's unrouted locks (issue 26 "Routed once the lock is signed"): a job whose row did not commit is never
// routed, but its lock may already be on its way. Its reservation goes back as soon as the chain can lock nothing for
// it, and stays while the lock may still land. The chain, ledger and store are in-memory fakes of the ports openEscrow
// takes; the lock batcher is a queue whose promises each test settles.

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

function harness(options: { insertFails: boolean }) {
  const lock = {
    signed: Promise.withResolvers<Hex>(),
    sent: Promise.withResolvers<Hex>(),
    mined: Promise.withResolvers<LockOutcome>(),
  };
  for (const step of Object.values(lock)) step.promise.catch(() => undefined);
  const queued: QueuedLock = { signed: lock.signed.promise, sent: lock.sent.promise, mined: lock.mined.promise };
  const released: Hex[][] = [];
  const failed: Hex[] = [];
  const deps = {
    ledger: {
      reserve: vi.fn(async () => ({ ok: true as const, availableAfter: 95n })),
      release: vi.fn(async (keys: Hex[]) => void released.push(keys)),
      available: vi.fn(async () => 100n),
      releaseIndexed: vi.fn(async () => undefined),
    },
    freshness: { caughtUpSince: vi.fn(async () => true) },
    jobs: {
      insert: vi.fn(async () => {
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
  return { deps, lock, released, failed };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("openEscrow: a lock whose job's row did not commit", () => {
  it("returns the reservation at once when no node took the batch", async () => {
    const { deps, lock, released } = harness({ insertFails: true });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    await expect(opening).rejects.toThrow("database down");
    expect(released).toEqual([]);
    const notSent = new Error("no node took the batch");
    lock.sent.reject(notSent);
    lock.mined.reject(notSent);
    await settle();
    expect(released).toHaveLength(1);
  });

  it("returns the reservation when the batch reverted", async () => {
    const { deps, lock, released } = harness({ insertFails: true });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    await expect(opening).rejects.toThrow("database down");
    lock.sent.resolve(BATCH_HASH);
    lock.mined.reject(new TransactionRevertedError(BATCH_HASH));
    await settle();
    expect(released).toHaveLength(1);
  });

  it("fails a lock that opened, instead of holding its credits until the deadline", async () => {
    const { deps, lock, released, failed } = harness({ insertFails: true });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    await expect(opening).rejects.toThrow("database down");
    lock.sent.resolve(BATCH_HASH);
    lock.mined.resolve({ kind: "opened", balanceAfter: 95n, creditsLocked: 5n, deadline: 1_120n });
    await settle();
    expect(failed).toHaveLength(1);
    expect(released).toEqual([]);
  });

  it("keeps the reservation while a sent lock is not known to be mined (it may still land)", async () => {
    const { deps, lock, released, failed } = harness({ insertFails: true });
    const opening = openEscrow(deps, prepared());
    lock.signed.resolve(BATCH_HASH);
    await expect(opening).rejects.toThrow("database down");
    lock.sent.resolve(BATCH_HASH);
    lock.mined.reject(new Error("not mined within the wait"));
    await settle();
    expect(released).toEqual([]);
    expect(failed).toEqual([]);
  });
});
