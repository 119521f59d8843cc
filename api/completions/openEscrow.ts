import type { Hex } from "viem";
import { MAX_LOCK_DELAY_SECONDS, jobIdToBytes32, newJobId } from "@credit-metered/client";
import type { Logger } from "pino";
import type { EscrowChain } from "../chain/escrowChain.js";
import type { LockBatcher, LockOutcome, LockRequest, QueuedLock } from "../chain/lockBatcher.js";
import { TransactionRevertedError } from "../chain/transactionSender.js";
import { mapOpenJobRevert, mapSkippedLock } from "../chain/mapOpenJobRevert.js";
import type { GatewayConfig } from "../config.js";
import { type ApiError } from "../errors/ApiError.js";
import type { JobLifecycle } from "../jobs/jobLifecycle.js";
import type { JobStore } from "../jobs/jobStore.js";
import type { CreditLedger } from "../ledger/creditLedger.js";
import type { UnconfirmedLocks } from "../ledger/unconfirmedLocks.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import { phaseTraceOn, traceJob, transactionTrace } from "../observability/phaseTrace.js";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import { DeadlineExceededError } from "../runtime/withDeadline.js";
import {
  freshAvailable,
  insufficientCredits,
  type FreshCreditsDeps,
  type PreparedCompletion,
} from "./prepareCompletion.js";

/** How often a job routed on an unmined lock checks whether the chain node went silent. */
const LOCK_WATCH_MS = 250;

/**
 * What reserving the credits and locking them on chain uses: the ledger, the job's row, the lock batcher, the
 * escrow (its clock, a refused lock's reason, a late lock's failJob), the lifecycle for a refused lock, and the
 * `submitted` mode's exposure bound.
 */
export interface EscrowDeps extends FreshCreditsDeps {
  ledger: Pick<CreditLedger, "reserve" | "release" | "lockMined" | "available" | "releaseIndexed">;
  jobs: Pick<JobStore, "insert" | "update">;
  locks: Pick<LockBatcher, "enqueue">;
  chain: Pick<
    EscrowChain,
    "acceptedAtNow" | "nodeSilent" | "resampleClock" | "openJobRevertAt" | "lockOutcomesOf" | "failJob" | "sender"
  >;
  lifecycle: Pick<JobLifecycle, "lockRefused">;
  unconfirmedLocks: Pick<UnconfirmedLocks, "tryAdmit" | "confirmed">;
  metrics: Pick<GatewayMetrics, "unconfirmedLockRefused" | "unconfirmedLockRefusedCredits">;
  config: Pick<GatewayConfig, "LOCK_MODE">;
  /** The escrow's job timeout, seconds (the deployment's `params.jobTimeout`): the deadline before the lock is mined. */
  chainJobTimeoutSeconds: number;
  logger: Logger;
}

export interface OpenedJob {
  jobId: string;
  jobKey: Hex;
  /** The hash of the openJobBatch transaction carrying this job's lock (its own JobOpened is in it). */
  escrowTx: Hex;
  creditsLocked: number;
  /** Available credits right after the lock (JobOpened.balanceAfter once mined; the ledger's figure before). */
  balanceAfterLock: number;
  /** Chain deadline, unix seconds: after it anyone may refund. */
  deadline: bigint;
  /** When the gateway started the job (its own timeout counts from here). */
  startedAt: number;
  /** Settles when the lock is mined; rejects with the client's error (an ApiError) if the chain refused it. */
  lockMined: Promise<void>;
  /**
   * Settles once the job's row is committed, or once it is known it never will be (then `lockRefused` is already
   * aborted); never rejects. The job is routed before it (issue 26: the insert's commit is off the path to the
   * worker), so nothing reaches the client before it: relayCompletion.ts waits for it before the first byte.
   */
  recorded: Promise<void>;
  /** Aborted, with the client's ApiError as reason, when the chain refused the lock: the job must stop. */
  lockRefused: AbortSignal;
  /**
   * The refusal's ApiError, set as soon as it is known, before the job is moved to `failed` (`lockRefused` aborts
   * only after that move, so the relay's own close finds the job moved). A relay that read the signal just before
   * the abort and then found its job failed answers with this instead of "closed by another process".
   */
  refusal?: ApiError;
  /**
   * Set by the relay when the job ends with nothing to charge (the client is answered with an error): a lock
   * mined after that is failed at once (issue 25), since the lifecycle's failJob could not reach an unmined lock.
   */
  endedWithoutCharge: boolean;
  /**
   * Whether this gateway has seen the lock mined (its JobOpened). A job closed without a charge while it is false
   * was answered before its lock was confirmed: the close marks the row so (`closed_before_lock`), in the same
   * write, and the webhooks never announce a submission its client did not see (issue 25).
   */
  lockConfirmed: boolean;
}

/**
 * Reserves the credits in the ledger, then queues the lock (group commit) and returns once its batch transaction
 * is signed at its nonce and on its way to the node (recorded, then broadcast in nonce order), so the escrow
 * transaction and its hash exist before any worker sees the job (ARCHITECTURE "Lock"; spec rule 3) without the
 * node's round trip on the path to the first token (docs/DESIGN.md "Routed once the lock is signed"). A lock no node
 * takes stops the job like a lock the escrow skipped: nothing is charged. In `confirmed` mode, or beyond the
 * unconfirmed-exposure bound, it returns only once the lock is mined. The gateway_job row is written alongside the
 * lock and the job is routed without waiting for its commit: the worker's prefill overlaps it, and the relay holds
 * everything from the client until it (`OpenedJob.recorded`). A row that cannot be written stops the job like a
 * refused lock (503, nothing charged, the lock returned once mined); a lock whose row is missing after a crash is an
 * expired open escrow the sweep refunds from the index.
 */
export async function openEscrow(deps: EscrowDeps, prepared: PreparedCompletion): Promise<OpenedJob> {
  const startedAt = Date.now();
  const jobId = newJobId(startedAt);
  const jobKey = jobIdToBytes32(jobId);
  const credits = prepared.creditsToLock;
  const t0 = phaseTraceOn ? performance.now() : 0;
  const availableAfter = await reserve(deps, prepared, jobKey, startedAt);
  const reservedAt = phaseTraceOn ? performance.now() : 0;
  const release = () =>
    deps.ledger
      .release([jobKey])
      .catch((error: unknown) => deps.logger.warn({ err: error, job_id: jobId }, "reservation not released"));

  // The job's clock starts now, not when its lock is mined: its deadline and its receipt's times run from here.
  const acceptedAt = deps.chain.acceptedAtNow(startedAt);
  const request: LockRequest = {
    jobKey,
    keyHash: prepared.keyHash,
    modelKey: prepared.model.modelKey,
    maxTokens: prepared.maxTokens,
    acceptedAt,
  };
  // The row and the lock are written side by side, and the job is routed once its lock is signed (issue 26: neither
  // the insert's commit nor the node's answer is on the path to the worker; the relay holds the first byte for
  // the commit, which the worker's prefill overlaps). A lock whose row never commits (a crash, the database down)
  // is an open escrow no row holds: the sweep refunds it after its deadline (sweepJobs.ts, from the index), and a
  // running gateway returns it at once when mined. The insert is queued first, so the row's later writes
  // (escrow_tx, a refused lock's move) follow it in the job store's order.
  const inserted = deps.jobs.insert({
    jobId,
    jobKey,
    wallet: prepared.wallet,
    keyHash: prepared.keyHash,
    model: prepared.model.id,
    tier: prepared.model.tier,
    stream: prepared.request.stream,
    maxTokens: prepared.maxTokens,
    creditsLocked: credits,
    promptTokens: prepared.promptTokens,
  });
  const queuedAt = phaseTraceOn ? performance.now() : 0;
  const queued = deps.locks.enqueue(request);
  const done = { insert: 0, signed: 0, sent: 0 };
  if (phaseTraceOn) {
    void inserted.then(
      () => (done.insert = performance.now()),
      () => undefined,
    );
    void queued.signed.then(
      () => (done.signed = performance.now()),
      () => undefined,
    );
    void queued.sent.then(
      () => (done.sent = performance.now()),
      () => undefined,
    );
  }
  // Settled now, so that a failed insert is never an unhandled rejection; `recorded` below acts on it.
  const row = inserted.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const [send] = await Promise.allSettled([untilSignedOrNodeSilent(deps, queued.signed)]);

  let escrowTx: Hex;
  try {
    if (send.status === "rejected") throw send.reason;
    if (send.value === "node_silent") {
      // The batch may still leave once the node is back: its hash is recorded then, and the reservation stays
      // until the index shows the lock (or it expires), so recovery can return that escrow.
      void queued.sent.then(
        (hash) => deps.jobs.update(jobId, { escrow_tx: hash }),
        () => undefined,
      );
      // The client gets a 503 now: a lock that opens later goes back at once.
      followUnroutedLock(deps, jobId, jobKey, queued, release);
      throw new DeadlineExceededError("the chain node stopped answering while the lock was being sent");
    }
    escrowTx = send.value;
  } catch (error) {
    if (error instanceof DeadlineExceededError) throw error;
    await release();
    const mapped = mapOpenJobRevert(error, { model: prepared.model.id, tier: prepared.model.tier });
    await deps.lifecycle.lockRefused(jobId, mapped ? `openJobBatch refused: ${mapped.code}` : "openJobBatch not sent");
    if (mapped) throw mapped;
    deps.logger.error({ err: error, job_id: jobId }, "lock batch not sent");
    throw serviceUnavailable("The escrow transaction could not be sent. Retry shortly.");
  }
  const sentAt = phaseTraceOn ? performance.now() : 0;
  await deps.jobs.update(jobId, { escrow_tx: escrowTx });
  const trace = (mode: string) => {
    if (!phaseTraceOn) return;
    const tx = transactionTrace(escrowTx);
    const now = performance.now();
    traceJob({
      mode,
      at: Date.now(),
      reserve: reservedAt - t0,
      insert: done.insert - queuedAt,
      batchWait: tx?.batchBegan === undefined ? undefined : tx.batchBegan - queuedAt,
      batchSize: tx?.batchSize,
      fees: tx?.fees,
      sign: tx?.sign,
      persist: tx?.persist,
      broadcast: tx?.broadcast,
      signed: done.signed - queuedAt,
      sent: done.sent - queuedAt,
      both: sentAt - queuedAt,
      after: now - sentAt,
      total: now - t0,
    });
  };

  const refused = new AbortController();
  const opened: OpenedJob = {
    jobId,
    jobKey,
    escrowTx,
    creditsLocked: credits,
    balanceAfterLock: Number(availableAfter),
    deadline: acceptedAt + BigInt(deps.chainJobTimeoutSeconds),
    startedAt,
    lockMined: Promise.resolve(),
    recorded: Promise.resolve(),
    lockRefused: refused.signal,
    endedWithoutCharge: false,
    lockConfirmed: false,
  };

  // The nodes made the batch re-sign (another sender at its nonce, fees under their floor): the job follows the
  // transaction that left. A batch no node took is handled with `mined`, which rejects with the same error.
  void queued.sent.then(
    async (hash) => {
      if (hash.toLowerCase() === opened.escrowTx.toLowerCase()) return;
      opened.escrowTx = hash;
      await deps.jobs.update(jobId, { escrow_tx: hash });
    },
    () => undefined,
  );

  const routedUnmined = deps.config.LOCK_MODE === "submitted" && deps.unconfirmedLocks.tryAdmit(credits);
  // A lock that opened goes back once, whichever of its mining and its job's refusal came first.
  let lockOpened = false;
  let returned: Promise<void> | undefined;
  const returnOnce = () => (returned ??= returnLateLock(deps, jobId, jobKey));
  const refuse = (apiError: ApiError, reason: string) => {
    if (refused.signal.aborted) return;
    if (routedUnmined) {
      deps.metrics.unconfirmedLockRefused.inc({ reason });
      deps.metrics.unconfirmedLockRefusedCredits.inc(credits);
    }
    refused.abort(apiError);
  };
  const mined = queued.mined
    .then(
      async (outcome: LockOutcome) => {
        if (outcome.kind === "opened") {
          deps.ledger.lockMined(jobKey);
          opened.deadline = outcome.deadline;
          opened.balanceAfterLock = Number(outcome.balanceAfter);
          opened.creditsLocked = Number(outcome.creditsLocked);
          lockOpened = true;
          opened.lockConfirmed = true;
          await deps.jobs.update(jobId, { deadline: opened.deadline });
          // The client was already answered with an error (the lock was not confirmed in time, its row could not
          // be written): the late lock goes back at once instead of holding the credits until the deadline.
          if (refused.signal.aborted || opened.endedWithoutCharge) await returnOnce();
          return;
        }
        if (outcome.reason === "accepted_at_invalid") deps.chain.resampleClock();
        // Skipped: nothing was locked, so nothing can be charged; the job stops, the reservation goes back.
        const apiError = await refusalOf(deps, prepared, request, outcome);
        await closeUnlocked(apiError, apiError.code);
        refuse(apiError, apiError.code);
        throw apiError;
      },
      async (error: unknown): Promise<never> => {
        if (
          await queued.sent.then(
            () => false,
            () => true,
          )
        ) {
          // No node took the batch: nothing can be locked (its nonce is filled by a no-op), the reservation goes
          // back now and the job, already routed, stops.
          const mapped = mapOpenJobRevert(error, { model: prepared.model.id, tier: prepared.model.tier });
          if (!mapped) deps.logger.error({ err: error, job_id: jobId }, "lock batch not sent");
          const apiError = mapped ?? serviceUnavailable("The escrow transaction could not be sent. Retry shortly.");
          await closeUnlocked(apiError, mapped ? mapped.code : "not_sent");
          refuse(apiError, mapped ? mapped.code : "lock_not_sent");
          throw apiError;
        }
        deps.logger.error({ err: error, job_id: jobId, tx: opened.escrowTx }, "lock batch reverted or not mined");
        const apiError = serviceUnavailable("The escrow lock did not go through. Retry shortly.");
        // Reverted: nothing was locked. Not known to be mined (no receipt in time): the lock may still land (the
        // transaction manager keeps it until final), within the escrow's MAX_LOCK_DELAY of its acceptance; if it
        // does, it goes back at once. The reservation stays until the index shows the lock (or it expires).
        if (error instanceof TransactionRevertedError) await closeUnlocked(apiError, "lock_reverted");
        else {
          deps.ledger.lockMined(jobKey);
          void watchLateLock(deps, jobId, jobKey, opened.escrowTx);
        }
        refuse(apiError, "lock_reverted");
        throw apiError;
      },
    )
    .finally(() => {
      if (routedUnmined) deps.unconfirmedLocks.confirmed(credits);
    });
  /** Nothing was locked: the refusal is recorded first (`OpenedJob.refusal`), then the job is failed. */
  async function closeUnlocked(refusal: ApiError, code: string): Promise<void> {
    opened.refusal = refusal;
    await release();
    await deps.lifecycle.lockRefused(jobId, `lock refused: ${code}`).catch(() => undefined);
  }

  // The row that could not be written: the job stops before anything reached its client (the relay waits for
  // `recorded`), nothing is charged, and its lock goes back like a refused one's (mined: failJob; skipped,
  // reverted or taken by no node: the reservation).
  opened.recorded = row.then((written) => {
    if (written.ok) return;
    deps.logger.error({ err: written.error, job_id: jobId }, "job row not written; stopping the routed job");
    refuse(serviceUnavailable("The job could not be recorded. Retry shortly."), "row_not_written");
    if (lockOpened) void returnOnce();
  });

  if (!routedUnmined) {
    // Confirmed mode, or beyond the exposure bound: the job is routed only once its lock is mined.
    await mined;
    trace("mined");
    return opened;
  }
  // The chain node stopping before this lock is confirmed would hold the job (and its settlement) until the node
  // is back: the job stops now with a retryable 503 instead. If the lock was mined, the job stays open on chain
  // and recovery returns its escrow (the client is never charged for it).
  const watchdog = setInterval(() => {
    if (!deps.chain.nodeSilent()) return;
    clearInterval(watchdog);
    refuse(
      serviceUnavailable(
        "The chain node stopped answering before this job's escrow lock was confirmed. Retry shortly.",
      ),
      "node_silent",
    );
  }, LOCK_WATCH_MS);
  watchdog.unref();
  void mined.finally(() => clearInterval(watchdog)).catch(() => undefined);
  opened.lockMined = Promise.race([
    mined,
    new Promise<never>((_, reject) =>
      refused.signal.addEventListener("abort", () => reject(refused.signal.reason as Error), { once: true }),
    ),
  ]);
  opened.lockMined.catch(() => undefined);
  trace("sent");
  return opened;
}

/** How long a lock batch not mined in time is still followed: as long as the escrow may still take it, and a
 *  minute more for the receipt to arrive. */
const LATE_LOCK_WATCH_MS = (MAX_LOCK_DELAY_SECONDS + 60) * 1000;

/**
 * A lock mined after its client was answered with an error (issue 25): its credits go back at once with failJob
 * (the job's row is already closed, so this is no lifecycle move). The same signer sent the lock, so failJob
 * queues behind it in nonce order.
 */
async function returnLateLock(deps: EscrowDeps, jobId: string, jobKey: Hex): Promise<void> {
  try {
    deps.logger.warn({ job_id: jobId }, "lock mined after the client was answered with an error; failing it");
    const hash = await deps.chain.failJob(jobKey);
    await deps.jobs.update(jobId, { fail_tx: hash });
  } catch (error) {
    // Closed meanwhile (the sweeper, recovery): nothing left to return.
    deps.logger.warn({ err: error, job_id: jobId }, "late lock not failed; left to the sweeper");
  }
}

/**
 * A lock sent for a job that is not routed (its row not written, or the node went silent before the send was
 * confirmed): once mined, an opened lock goes back at once (returnLateLock); one skipped, reverted or taken by no node
 * locked nothing, so its reservation goes back. A lock sent but not known to be mined may still land: its reservation
 * stays until the index shows it (or the reservation expires), as for any lock not yet indexed.
 */
function followUnroutedLock(
  deps: EscrowDeps,
  jobId: string,
  jobKey: Hex,
  queued: Pick<QueuedLock, "sent" | "mined">,
  release: () => Promise<unknown>,
): void {
  void Promise.allSettled([queued.sent, queued.mined]).then(([sent, mined]) => {
    if (mined.status === "fulfilled")
      return mined.value.kind === "opened" ? returnLateLock(deps, jobId, jobKey) : release();
    if (sent.status === "rejected" || mined.reason instanceof TransactionRevertedError) return release();
    return undefined;
  });
}

/** Follows a lock batch not mined in time: if it lands and opened this job, the job is failed at once. */
async function watchLateLock(deps: EscrowDeps, jobId: string, jobKey: Hex, escrowTx: Hex): Promise<void> {
  try {
    const receipt = await deps.chain.sender.manager.waitMined(escrowTx, LATE_LOCK_WATCH_MS);
    if (receipt.status !== "success") return;
    const outcome = deps.chain.lockOutcomesOf(receipt).get(jobKey.toLowerCase());
    if (outcome?.kind === "opened") await returnLateLock(deps, jobId, jobKey);
  } catch {
    // Never mined, or replaced: the sweeper follows what the chain decided.
  }
}

/** The batch's hash once it is signed at its nonce, or "node_silent" as soon as the node is known to have stopped. */
async function untilSignedOrNodeSilent(deps: EscrowDeps, signed: Promise<Hex>): Promise<Hex | "node_silent"> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<"node_silent">((resolve) => {
    timer = setInterval(() => {
      if (deps.chain.nodeSilent()) resolve("node_silent");
    }, LOCK_WATCH_MS);
  });
  try {
    return await Promise.race([signed, silent]);
  } finally {
    clearInterval(timer);
  }
}

/** Reserves the job's credits; before refusing, lets the index catch up (bounded) and tries once more. */
async function reserve(deps: EscrowDeps, prepared: PreparedCompletion, jobKey: Hex, since: number): Promise<bigint> {
  const credits = BigInt(prepared.creditsToLock);
  const first = await deps.ledger.reserve(prepared.wallet, jobKey, credits);
  if (first.ok) return first.availableAfter;
  await freshAvailable(deps, prepared.wallet, since);
  const second = await deps.ledger.reserve(prepared.wallet, jobKey, credits);
  if (second.ok) return second.availableAfter;
  throw insufficientCredits(
    prepared.model,
    { creditsRequired: prepared.creditsToLock, maxTokens: prepared.maxTokens },
    Number(second.available),
  );
}

/** The client's error for a lock the batch skipped, with the figures `openJob`'s revert gives. */
async function refusalOf(
  deps: EscrowDeps,
  prepared: PreparedCompletion,
  request: LockRequest,
  skipped: Extract<LockOutcome, { kind: "skipped" }>,
): Promise<ApiError> {
  const context = { model: prepared.model.id, tier: prepared.model.tier };
  deps.logger.warn({ job_key: request.jobKey, reason: skipped.reason }, "lock skipped by the escrow");
  const revert = await deps.chain.openJobRevertAt(request, skipped.blockNumber).catch(() => undefined);
  return (
    mapOpenJobRevert(revert, context) ??
    mapSkippedLock(skipped.reason, { ...context, creditsRequired: prepared.creditsToLock })
  );
}
