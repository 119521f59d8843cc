/**
 * The one owner of a job's life (issue 17 "One module owns a job's life"). Every change of
 * `gateway_job.status` goes through `JobLifecycle.move`, which checks `JOB_TRANSITIONS` and writes with a
 * compare-and-set (`UPDATE … WHERE job_id = $1 AND status = ANY($from)`): of two gateway processes, or the
 * sweeper and a live request, racing to close the same job exactly one moves it and performs the chain action
 * that goes with the move; the other sees "already moved" and does nothing (no second settlement, refund,
 * failJob, and so no second webhook). The chain action follows the claim, so a process that dies between the
 * two leaves a closed row whose escrow is still open on chain: the sweeper's refund of expired indexed jobs
 * (sweepJobs.ts) returns it after the chain deadline, as it does for any escrow nobody closed.
 *
 * API for the rest of the gateway (all take the job's id and on-chain key):
 * - `acknowledged(jobId, worker)`: a worker took the job (pending → processing; processing again after failover).
 * - `conclude(job, outcome)`: the end of a live request, from the relay's outcome: a verified receipt is settled
 *   (→ settling, → settled when mined), a failure returns the escrow with failJob (→ failed), a timeout refunds
 *   (→ refunded).
 * - `lockRefused(jobId, reason)`: the escrow lock was refused or reverted; nothing is locked (→ failed).
 * - `disputeOpened(jobId)`: a mined dispute (settled → disputed).
 * - `finishFromStoredReceipt(row, untouchedForMs?)`: settle the stored verified receipt of a `settling` row
 *   (recovery, a dead gateway's jobs); claimed only when nobody touched the row for `untouchedForMs` (default the
 *   30 s retry interval), so one process does it.
 * - `returnEscrow(row, reason, chain?)`: give back the escrow of a `pending`/`processing` job without a receipt:
 *   failJob before the chain deadline, refund after it (the deadline is read from the chain when not given).
 * - `reconcile(row, chainNow)`: the sweeper's decision for one open row (uses the two above).
 * - `refundExpired(jobKey, deadline)`: refund an expired escrow the index knows about but no open row holds.
 * - `returnOrphanLock(jobKey)`: failJob a lock no row holds, found by the sweep before its deadline.
 * `api/main.ts` builds the one instance (`createJobLifecycle`); the chain actions are `JobChainActions`.
 *
 * How a job is refunded or failed (api/README.md "Where to read"): every ending without a verified receipt gives
 * the whole lock back, and only this module sends the transaction that does it (`fail`, `timeOut`, `returnEscrow`,
 * `refundExpired`); the client's answer carries `credits_refunded` (the lock) and the credits remaining.
 * - `fail` → `failed`, **failJob** (immediate, gateway only): no worker, the worker failed, a rejected receipt, the
 *   client gone without a receipt for what it received, an internal error (relayCompletion.ts says which).
 * - `timeOut` → `refunded`: nobody completed within the job timeout. **refund** once the chain deadline passed
 *   (`waitForDeadline`, retried while the chain finds it early), or failJob when the gateway's timeout is shorter
 *   than the escrow's (same money at once). A refund someone else sent first is reported as theirs.
 * - `lockRefused` → `failed`, no transaction: the lock was refused or reverted, nothing is locked (openEscrow.ts
 *   releases the ledger's reservation; a lock mined after its client was refused is failJob'ed there at once).
 * - After a crash or a dead gateway (sweepJobs.ts, gatewayLeases.ts): `reconcile`/`returnEscrow` fail an open job
 *   before its chain deadline and refund it after; a stored receipt is settled instead; a receipt the escrow refuses
 *   for good (`FINAL_SETTLEMENT_REFUSALS`) is failed back. `refundExpired` refunds an escrow nobody's row holds.
 * - A failJob or refund that does not go through leaves the escrow open: the sweeper refunds it after the deadline.
 */
import type { Hex } from "viem";
import type { Logger } from "pino";
import type { Receipt } from "../chain/receiptTypes.js";
import type { ChainJobStatus } from "@credit-metered/client";
import type { Deferral, GatewayJobRow, GatewayJobStatus, JobStore, JobPatch } from "./jobStore.js";

/** The legal edges. A status absent from a list can never follow it; `failed` and `refunded` are final. */
export const JOB_TRANSITIONS: Readonly<Record<GatewayJobStatus, readonly GatewayJobStatus[]>> = {
  // settled: the sweeper finds the chain settled a job this row never saw settling (another process, a crash).
  pending: ["processing", "settling", "settled", "failed", "refunded"],
  // processing → processing: after a failover before the first token, the next worker's acknowledgement.
  processing: ["processing", "settling", "settled", "failed", "refunded"],
  // failed: the escrow refuses the receipt for good. refunded: nobody settled before the deadline.
  // disputed: the chain settled and a dispute was opened before this row recorded the settlement.
  settling: ["settled", "failed", "refunded", "disputed"],
  // refunded: a dispute upheld returns the charge. settling: a reorg took the settlement (or the lock) off the
  // canonical chain before it was final; the stored receipt is settled again.
  settled: ["settling", "disputed", "refunded"],
  // settled: the dispute was rejected; refunded: it was upheld.
  disputed: ["settled", "refunded"],
  failed: [],
  refunded: [],
};

/** Whether `from → to` is an edge of the table. */
export function canMove(from: GatewayJobStatus, to: GatewayJobStatus): boolean {
  return JOB_TRANSITIONS[from].includes(to);
}

/** Every status with an edge to `to`. */
export function sourcesOf(to: GatewayJobStatus): GatewayJobStatus[] {
  return (Object.keys(JOB_TRANSITIONS) as GatewayJobStatus[]).filter((from) => canMove(from, to));
}

/** What settling a receipt gives the caller: the transaction as soon as it is sent, and the mined facts. */
export interface SettlementHandle {
  submitted: Promise<Hex>;
  mined: Promise<MinedSettlement>;
}

export interface MinedSettlement {
  hash: Hex;
  blockNumber: bigint;
  /** The hash of the block that holds the settlement. */
  blockHash?: Hex;
  /** From the JobSettled event, when the transaction carried one for this job. */
  creditsCharged?: bigint;
}

/**
 * The chain actions that go with a transition: the module's collaborator. Production: `chainActionsOf(deps)`
 * (escrow contract + settlement batcher); unit tests: an in-memory chain.
 */
export interface JobChainActions {
  /** Sends `failJob` (the escrow goes back to the wallet); resolves once sent. */
  failJob(jobKey: Hex): Promise<Hex>;
  /** Sends `refund` (allowed after the chain deadline); resolves once sent. */
  refund(jobKey: Hex): Promise<Hex>;
  waitMined(hash: Hex): Promise<void>;
  /** Queues a receipt for settlement (batched). */
  settle(receipt: Receipt, signature: Hex): SettlementHandle;
  jobOf(jobKey: Hex): Promise<{ status: ChainJobStatus; deadline: bigint }>;
  /** The canonical chain's latest block number (finality checks). */
  headBlock(): Promise<bigint>;
  /** The hash of the canonical chain's block at this height (finality checks without a `jobOf` per job). */
  blockHashAt?(blockNumber: bigint): Promise<Hex | undefined>;
  /** Resolves when the chain will accept `refund` for a job with this deadline. */
  waitForDeadline(deadline: bigint): Promise<void>;
  /** The transaction that refunded the job (its `JobRefunded`), whoever sent it; undefined if none is found. */
  refundTxOf(jobKey: Hex): Promise<Hex | undefined>;
  /** The escrow's custom error name when `error` is a revert, for deciding whether retrying can help. */
  refusalOf(error: unknown): string | undefined;
}

/** How a live job ended, as the relay saw it (relayCompletion.ts). */
export type JobOutcome =
  /** A verified receipt: the whole answer, or the part delivered before the client left. */
  | { kind: "receipt"; receipt: Receipt; signature: Hex; worker: Hex }
  /** Nothing to charge: no worker, a worker failure, a rejected receipt, the client gone without a receipt. */
  | { kind: "failed"; reason: string }
  /** No worker completed within the job timeout. */
  | { kind: "timed_out" };

export type Conclusion =
  | { kind: "settling"; settlement: SettlementHandle }
  | { kind: "closed"; status: "failed" | "refunded"; tx: Hex | undefined }
  /** Another process (or the sweeper) moved the job first; nothing was done here. */
  | { kind: "already_moved"; current: GatewayJobStatus | undefined };

export type MoveResult = { moved: true } | { moved: false; current: GatewayJobStatus | undefined };

export interface JobRef {
  jobId: string;
  jobKey: Hex;
}

export interface JobLifecycleOptions {
  jobs: JobStore;
  chain: JobChainActions;
  logger: Logger;
  /** The gateway's job timeout and the chain's: a gateway timeout shorter than the chain's fails the job instead
   *  of waiting to refund it (same money, reported `refunded`). */
  gatewayTimeoutMs: number;
  chainTimeoutMs: number;
  /** A `settling` row untouched this long is settled again from its stored receipt. */
  settlementRetryAfterMs: number;
  /** Rows whose escrow never reached the chain are closed after these graces. */
  unsentGraceMs: number;
  unminedGraceMs: number;
  /** Pause before a refund the chain found early (`JobNotExpired`) is sent again. Default 1 s. */
  refundRetryMs?: number;
  /** Blocks a settlement must be buried under before its row is final (CHAIN_FINALITY_DEPTH). Default 1. */
  finalityDepth?: number;
  /** How long a mined settlement waits for the chain to bury it `finalityDepth` deep before it is recorded without
   *  `final` (left to the sweeper). Default 500 ms; less than the store's hold bound, which it waits within. */
  finalWaitMs?: number;
}

/** A head read this recently serves every settlement waiting for its finality meanwhile (finalSoon). */
const HEAD_REUSE_MS = 50;
/** How long a settlement not final within `finalWaitMs` is still watched for finality before the sweeper's turn. */
const FINAL_LATER_MS = 5_000;
/** The head poll's pause while only such settlements wait: nothing is held on them. */
const LATER_HEAD_POLL_MS = 250;

/** A refund refused as early is sent again this many times (the chain's clock may trail the wall clock). */
const REFUND_ATTEMPTS = 30;

/** Receipts the chain refuses for good: settling again cannot help, so the escrow goes back. */
export const FINAL_SETTLEMENT_REFUSALS: ReadonlySet<string> = new Set([
  "WorkerNotEligible",
  "ReceiptTimeInvalid",
  "SettlementWindowClosed",
]);

export class JobLifecycle {
  private readonly jobs: JobStore;
  private readonly chain: JobChainActions;
  private readonly logger: Logger;
  private head: { at: number; value: Promise<bigint> } | undefined;
  /** Canonical block hashes read for finalSoon, by height, each shared by the settlements mined in that block. */
  private readonly canonical = new Map<bigint, { at: number; value: Promise<Hex | undefined> }>();
  /** Settlements waiting for the head to bury them (finalSoon), served by one head poll. */
  private headWaiters: { block: bigint; until: number; urgent: boolean; resolve: (reached: boolean) => void }[] = [];
  private headPolling: Promise<void> | undefined;
  /** The highest head read and when it was first seen, for the chain's pace (`blockMs`). */
  private headSeen: { value: bigint; at: number } | undefined;
  /** Ms per block between the last two heads read that differed (undefined until two have). */
  private blockMs: number | undefined;

  constructor(private readonly options: JobLifecycleOptions) {
    this.jobs = options.jobs;
    this.chain = options.chain;
    this.logger = options.logger;
  }

  /**
   * The only status write. Moves `jobId` to `to` from any status with an edge to it (or from `only`, a subset),
   * atomically; refuses (and logs) anything else.
   */
  async move(
    jobId: string,
    to: GatewayJobStatus,
    patch: JobPatch = {},
    only?: GatewayJobStatus[],
    options: { deferred?: Deferral } = {},
  ): Promise<MoveResult> {
    const sources = sourcesOf(to);
    const from = only ? only.filter((status) => sources.includes(status)) : sources;
    if (only && from.length !== only.length)
      this.logger.error({ job_id: jobId, from: only, to }, "illegal transition requested; refused");
    if (from.length > 0 && (await this.jobs.transition(jobId, from, to, patch, options))) return { moved: true };
    const current = (await this.jobs.get(jobId))?.status;
    if (current !== undefined && current !== to && !canMove(current, to))
      this.logger.warn({ job_id: jobId, from: current, to }, "transition refused: the job already moved");
    else this.logger.info({ job_id: jobId, from: current, to }, "transition not made: the job already moved");
    return { moved: false, current };
  }

  /**
   * A worker acknowledged the job. `processing_at` (the job.processing fact) is set by the first acknowledgement
   * only (the store keeps a set `processing_at`); after a failover the next worker's only replaces `worker`.
   * Held (jobStore.ts): nobody acts on it before the job closes, so it is written with the job's next move — a
   * short job's close to `settling` writes `processing` and `processing_at` in the same statement — or after the
   * store's hold bound. A close made later is written after it, or collapsed with it.
   */
  async acknowledged(jobId: string, worker: Hex): Promise<MoveResult> {
    return this.move(
      jobId,
      "processing",
      { worker: worker.toLowerCase(), processing_at: new Date() },
      ["pending", "processing"],
      { deferred: "hold" },
    );
  }

  /** The escrow lock was refused or reverted: nothing is locked, so no chain action. */
  async lockRefused(jobId: string, reason: string): Promise<MoveResult> {
    return this.move(jobId, "failed", { error: reason, completed_at: new Date() }, [
      "pending",
      "processing",
      "settling",
    ]);
  }

  /** A dispute on the job was mined (read-your-write until the index has it). */
  async disputeOpened(jobId: string): Promise<MoveResult> {
    return this.move(jobId, "disputed", {}, ["settled", "settling"]);
  }

  /**
   * Ends a live request from the relay's outcome. A job ended without a charge before this gateway saw its lock
   * mined (`lockConfirmed` false) is marked `closed_before_lock` in the close's own write: its client was answered
   * before the lock was confirmed, and the webhook ingester must know that before the lock's JobOpened can arrive
   * (a mark written after the close, once failJob found no job on chain, lost that race when the lock landed
   * within a few hundred milliseconds of the close).
   */
  async conclude(job: JobRef & { deadline: bigint; lockConfirmed: boolean }, outcome: JobOutcome): Promise<Conclusion> {
    const beforeLock = !job.lockConfirmed;
    switch (outcome.kind) {
      case "receipt":
        return this.settle(job, outcome.receipt, outcome.signature, outcome.worker);
      case "failed":
        return this.fail(job, outcome.reason, ["pending", "processing"], beforeLock);
      case "timed_out":
        return this.timeOut(job, beforeLock);
    }
  }

  /**
   * Stores the verified receipt with the move to `settling` (recovery settles it after a crash), queues it, and
   * moves to `settled` once mined.
   */
  async settle(job: JobRef, receipt: Receipt, signature: Hex, worker: Hex): Promise<Conclusion> {
    const moved = await this.move(
      job.jobId,
      "settling",
      {
        receipt,
        signature,
        worker: worker.toLowerCase(),
        output_hash: receipt.outputHash,
        final_token_at: receipt.finalTokenAt,
        prompt_tokens: receipt.promptTokens,
        completion_tokens: receipt.completionTokens,
      },
      ["pending", "processing"],
    );
    if (!moved.moved) return { kind: "already_moved", current: moved.current };
    return { kind: "settling", settlement: this.sendSettlement(job, receipt, signature) };
  }

  /** Returns the escrow with failJob (the money back at once). */
  async fail(
    job: JobRef,
    reason: string,
    from: GatewayJobStatus[] = ["pending", "processing", "settling"],
    beforeLock = false,
  ): Promise<Conclusion> {
    this.logger.warn({ job_id: job.jobId, reason }, "failing job");
    const moved = await this.move(
      job.jobId,
      "failed",
      { error: reason, completed_at: new Date(), ...(beforeLock ? { closed_before_lock: true } : {}) },
      from,
    );
    if (!moved.moved) return { kind: "already_moved", current: moved.current };
    const tx = await this.sendFailJob(job, reason, false);
    return { kind: "closed", status: "failed", tx };
  }

  /**
   * No worker completed in time: the job is `refunded`. The chain refunds only after its own deadline; a gateway
   * configured with a shorter timeout fails the job instead, which returns the escrow the same way.
   */
  async timeOut(job: JobRef & { deadline: bigint }, beforeLock = false): Promise<Conclusion> {
    this.logger.warn({ job_id: job.jobId }, "job timed out");
    const moved = await this.move(
      job.jobId,
      "refunded",
      {
        timed_out: true,
        error: "job timeout",
        completed_at: new Date(),
        ...(beforeLock ? { closed_before_lock: true } : {}),
      },
      ["pending", "processing"],
    );
    if (!moved.moved) return { kind: "already_moved", current: moved.current };
    const tx =
      this.options.gatewayTimeoutMs >= this.options.chainTimeoutMs
        ? await this.sendRefund(job, job.deadline)
        : await this.sendFailJob(job, "job timeout", true);
    return { kind: "closed", status: "refunded", tx };
  }

  /**
   * Settles the stored verified receipt of a `settling` row (recovery, or a dead gateway's job). Only one process
   * retries a given row per `settlementRetryAfterMs` (a compare-and-set on `updated_at`); a receipt the escrow
   * refuses for good fails the job, returning the escrow.
   */
  async finishFromStoredReceipt(
    row: GatewayJobRow,
    untouchedForMs = this.options.settlementRetryAfterMs,
  ): Promise<Conclusion> {
    if (!row.receipt || !row.signature || row.status !== "settling")
      return { kind: "already_moved", current: row.status };
    const claimed = await this.jobs.claimStale(row.job_id, "settling", untouchedForMs);
    if (!claimed) return { kind: "already_moved", current: row.status };
    this.logger.info({ job_id: row.job_id }, "settling a stored receipt");
    const job = { jobId: row.job_id, jobKey: row.job_key as Hex };
    const settlement = this.sendSettlement(job, row.receipt, row.signature as Hex);
    try {
      await settlement.mined;
    } catch (error) {
      const refusal = this.chain.refusalOf(error);
      if (refusal && FINAL_SETTLEMENT_REFUSALS.has(refusal))
        return this.fail(job, `settlement refused: ${refusal}`, ["settling"]);
    }
    return { kind: "settling", settlement };
  }

  /**
   * Gives back the escrow of an open job that has no receipt (its request is gone: a crash, a dead gateway):
   * refunded once the chain deadline passed, failed at once before it.
   */
  async returnEscrow(
    row: GatewayJobRow,
    reason: string,
    chain?: { deadline: bigint; now: bigint },
  ): Promise<Conclusion> {
    const known = chain ?? {
      deadline: (await this.chain.jobOf(row.job_key as Hex)).deadline,
      now: BigInt(Math.floor(Date.now() / 1000)),
    };
    const job = { jobId: row.job_id, jobKey: row.job_key as Hex, deadline: known.deadline };
    if (known.now > known.deadline) return this.timeOut(job);
    return this.fail(job, reason, ["pending", "processing"]);
  }

  /**
   * The sweeper's decision for one row left open by a process that is not running it (sweepJobs.ts): follow
   * what the chain decided, settle a stored receipt, refund an expired escrow, close a row whose escrow never
   * reached the chain.
   */
  async reconcile(row: GatewayJobRow, chainNow: bigint): Promise<void> {
    const jobKey = row.job_key as Hex;
    const onChain = await this.chain.jobOf(jobKey);
    if (onChain.status === "none") {
      // openJob never mined (refused, dropped, or a crash before sending): nothing is locked. A row whose
      // transaction was never sent is closed after a short grace that only covers another replica still sending
      // it; a sent one gets time to be mined.
      const age = Date.now() - row.created_at.getTime();
      const grace = row.escrow_tx === null ? this.options.unsentGraceMs : this.options.unminedGraceMs;
      if (age > grace)
        await this.lockRefused(row.job_id, row.escrow_tx === null ? "escrow never sent" : "escrow never opened");
      return;
    }
    if (onChain.status !== "open") {
      await this.followChain(row, onChain.status);
      return;
    }
    if (row.receipt && row.signature) {
      await this.finishFromStoredReceipt(row);
      return;
    }
    if (chainNow > onChain.deadline) {
      this.logger.info({ job_id: row.job_id }, "recovery: refunding an expired job");
      await this.returnEscrow(row, "job timeout", { deadline: onChain.deadline, now: chainNow });
    }
  }

  /**
   * Finality (docs/DESIGN.md "Finality"): a `settled` row is final once its settlement is `finalityDepth` blocks
   * below `head` and the canonical chain still has the job settled. A row whose settlement a reorg removed goes
   * back to `settling` (an edge of the table, so a compare-and-set) and its stored receipt is settled again; the
   * lock gone too, it stays `settling` for `reconcile` (the transaction manager re-sends the orphaned lock). A
   * row the chain says refunded follows it. Returns what was decided.
   */
  async confirmFinality(row: GatewayJobRow, head: bigint): Promise<"final" | "not_yet" | "resettling" | "followed"> {
    if (row.status !== "settled" || row.final) return "final";
    const depth = BigInt(this.options.finalityDepth ?? 1);
    // Settled by following the chain (no block recorded): measured from now.
    if (row.settlement_block === null) {
      await this.jobs.update(row.job_id, { settlement_block: head });
      return "not_yet";
    }
    if (head - BigInt(row.settlement_block) < depth) return "not_yet";
    const onChain = await this.chain.jobOf(row.job_key as Hex);
    if (onChain.status === "settled" || onChain.status === "disputed") {
      await this.jobs.update(row.job_id, { final: true });
      return "final";
    }
    if (onChain.status === "refunded" || onChain.status === "dispute_upheld") {
      const moved = await this.move(row.job_id, "refunded", { final: true }, ["settled"]);
      return moved.moved ? "followed" : "not_yet";
    }
    if (onChain.status === "failed") {
      // Only this gateway's own failJob fails a job; a row that settled it never sent one. Left for an operator.
      this.logger.error({ job_id: row.job_id }, "settled row whose job the chain failed");
      return "not_yet";
    }
    this.logger.warn(
      { job_id: row.job_id, chain_status: onChain.status, settlement_tx: row.settlement_tx },
      "a reorg removed this job's settlement: settling its stored receipt again",
    );
    const moved = await this.move(
      row.job_id,
      "settling",
      { settlement_tx: null, settlement_block: null, credits_charged: null, completed_at: null },
      ["settled"],
    );
    if (!moved.moved) return "not_yet";
    if (onChain.status === "open" && row.receipt && row.signature)
      await this.finishFromStoredReceipt({ ...row, status: "settling" }, 0);
    return "resettling";
  }

  /**
   * Returns a lock no row holds (its gateway died between sending it and committing the row: openEscrow.ts writes
   * them side by side) with failJob, at once instead of at its chain deadline. There is no row to move, so this is no
   * lifecycle move; a lock closed meanwhile (its own gateway's late return, a peer) is left as it is.
   */
  async returnOrphanLock(jobKey: Hex): Promise<Hex | undefined> {
    const hash = await this.closeRowless(jobKey, "orphan lock", () => this.chain.failJob(jobKey));
    if (hash) this.logger.warn({ job_key: jobKey, tx: hash }, "lock without a job row returned");
    return hash;
  }

  /** Refunds an expired escrow that no open row of this gateway holds (a crash before recording, a failJob never
   *  sent). The escrow refuses a second refund, so a race here costs a reverted transaction, never money. */
  async refundExpired(jobKey: Hex, deadline: bigint): Promise<Hex | undefined> {
    return this.closeRowless(jobKey, "expired escrow", async () => {
      await this.chain.waitForDeadline(deadline);
      return this.chain.refund(jobKey);
    });
  }

  /** Sends a close for an escrow without a row and waits for it to be mined; a job already closed is no error. */
  private async closeRowless(jobKey: Hex, what: string, send: () => Promise<Hex>): Promise<Hex | undefined> {
    try {
      const hash = await send();
      await this.chain.waitMined(hash);
      return hash;
    } catch (error) {
      const refusal = this.chain.refusalOf(error);
      if (refusal === "JobNotInStatus") this.logger.info({ job_key: jobKey }, `${what} already closed`);
      else this.logger.error({ err: error, job_key: jobKey, revert: refusal }, `${what} not closed`);
      return undefined;
    }
  }

  private async followChain(row: GatewayJobRow, status: Exclude<ChainJobStatus, "none" | "open">): Promise<void> {
    if (status === "disputed") {
      // A dispute only follows a settlement.
      await this.move(row.job_id, "settled", {}, ["pending", "processing", "settling"]);
      await this.move(row.job_id, "disputed", {}, ["settled"]);
      return;
    }
    const to = status === "dispute_upheld" ? "refunded" : status;
    await this.move(row.job_id, to, { completed_at: new Date() }, ["pending", "processing", "settling"]);
  }

  private sendSettlement(job: JobRef, receipt: Receipt, signature: Hex): SettlementHandle {
    const settlement = this.chain.settle(receipt, signature);
    settlement.submitted.then(
      (hash) => this.jobs.update(job.jobId, { settlement_tx: hash }).catch(() => undefined),
      () => undefined,
    );
    settlement.mined.then(
      async (mined) => {
        try {
          // Held (jobStore.ts): reads through the store (the sweeper's too) see the row settled at once, while
          // whether the settlement is already final is found out; `final` is then written in the same statement.
          const recorded = this.move(
            job.jobId,
            "settled",
            {
              settlement_tx: mined.hash,
              settlement_block: mined.blockNumber,
              ...(mined.creditsCharged !== undefined ? { credits_charged: mined.creditsCharged } : {}),
              completed_at: new Date(),
            },
            ["settling", "pending", "processing"],
            { deferred: "hold" },
          );
          recorded.catch(() => undefined); // awaited below, after the finality check
          const final = await this.finalSoon(job.jobKey, mined, this.options.finalWaitMs ?? 500);
          if (final) await this.jobs.update(job.jobId, { final: true });
          this.jobs.writeSoon(job.jobId);
          const { moved } = await recorded;
          if (!final && moved && this.byBlock(mined)) void this.finalLater(job, mined);
        } catch (error) {
          // The database did not answer: the row stays `settling` and the sweeper finds the job settled on chain.
          // Never an unhandled rejection, which would take the whole process down.
          this.logger.warn(
            { err: error, job_id: job.jobId },
            "recording a mined settlement failed; left to the sweeper",
          );
        }
      },
      (error: unknown) => {
        // Left `settling` with its receipt: the sweeper retries, or fails the job if the refusal is final.
        this.logger.error({ err: error, job_id: job.jobId, revert: this.chain.refusalOf(error) }, "settlement failed");
      },
    );
    return settlement;
  }

  /**
   * Whether a settlement just mined is final within `waitMs` (the check `confirmFinality` makes): under load the
   * chain moves `finalityDepth` blocks past it within milliseconds (automine), and the move to `settled` then carries
   * `final` instead of the sweeper writing the row once more (issue 26). Otherwise, or when the chain does not
   * answer, the sweeper decides it as before. Once deep enough, a settlement whose transaction carried this job's
   * JobSettled is still in force if its block is still the canonical one at that height: one block read per block,
   * shared by every job settled in it, instead of a `jobOf` per job (issue 26).
   */
  private async finalSoon(jobKey: Hex, mined: MinedSettlement, waitMs: number, urgent = true): Promise<boolean> {
    const depth = BigInt(this.options.finalityDepth ?? 1);
    try {
      if (!(await this.headReaches(mined.blockNumber + depth, Date.now() + waitMs, urgent))) return false;
      if (this.byBlock(mined)) {
        const canonical = await this.canonicalHash(mined.blockNumber);
        // Another block there: a reorg took the settlement (or the node lags); the sweeper decides.
        return canonical?.toLowerCase() === mined.blockHash!.toLowerCase();
      }
      const onChain = await this.chain.jobOf(jobKey);
      return onChain.status === "settled" || onChain.status === "disputed";
    } catch {
      return false;
    }
  }

  /** Whether the settlement's finality can be read off its block (it carried this job's JobSettled). */
  private byBlock(mined: MinedSettlement): boolean {
    return mined.blockHash !== undefined && mined.creditsCharged !== undefined && this.chain.blockHashAt !== undefined;
  }

  /**
   * A settlement not final within `finalWaitMs` (a chain with block times: the next block is up to a block time
   * away) is checked again once the chain is deep enough, within FINAL_LATER_MS, by its block as finalSoon does:
   * the same write of `final` the sweeper would make, without the sweeper's `jobOf` per job (issue 26). What is not
   * decided by then is the sweeper's.
   */
  private async finalLater(job: JobRef, mined: MinedSettlement): Promise<void> {
    try {
      if (await this.finalSoon(job.jobKey, mined, FINAL_LATER_MS, false))
        await this.jobs.update(job.jobId, { final: true });
    } catch (error) {
      this.logger.warn({ err: error, job_id: job.jobId }, "recording finality failed; left to the sweeper");
    }
  }

  /**
   * Resolves true once the chain's head is at `block` or past it, false at `until`. One head poll serves every
   * waiting settlement: every HEAD_REUSE_MS while one waits `urgent`ly (its row's write is held meanwhile), else
   * every LATER_HEAD_POLL_MS.
   */
  private async headReaches(block: bigint, until: number, urgent: boolean): Promise<boolean> {
    const head = await this.recentHead();
    if (head >= block) return true;
    if (Date.now() >= until) return false;
    // At the chain's pace the head cannot get there in time (blocks every second, a wait of half a second): a
    // poll every HEAD_REUSE_MS until then would only read the same head, ten reads per settled block on the 1 s
    // chain (issue 26).
    if (this.blockMs !== undefined && Number(block - head) * this.blockMs > until - Date.now()) return false;
    return new Promise((resolve) => {
      this.headWaiters.push({ block, until, urgent, resolve });
      this.headPolling ??= this.pollHead().finally(() => (this.headPolling = undefined));
    });
  }

  private async pollHead(): Promise<void> {
    while (this.headWaiters.length > 0) {
      const pause = this.headWaiters.some((waiter) => waiter.urgent) ? HEAD_REUSE_MS : LATER_HEAD_POLL_MS;
      await new Promise((resolve) => setTimeout(resolve, pause).unref());
      // A failed read decides nothing: the waiters wait on until their bound.
      const head = await this.recentHead().catch(() => undefined);
      const now = Date.now();
      this.headWaiters = this.headWaiters.filter((waiter) => {
        if (head !== undefined && head >= waiter.block) waiter.resolve(true);
        else if (now >= waiter.until) waiter.resolve(false);
        else return true;
        return false;
      });
    }
  }

  /** Follows the chain's pace from the heads read: ms per block since the previous higher head. */
  private observePace(head: bigint): void {
    const now = Date.now();
    if (this.headSeen && head > this.headSeen.value)
      this.blockMs = (now - this.headSeen.at) / Number(head - this.headSeen.value);
    if (!this.headSeen || head > this.headSeen.value) this.headSeen = { value: head, at: now };
  }

  /** The canonical hash at `blockNumber`, read at most once per HEAD_REUSE_MS for all jobs settled in that block. */
  private canonicalHash(blockNumber: bigint): Promise<Hex | undefined> {
    const now = Date.now();
    const cached = this.canonical.get(blockNumber);
    if (cached && now - cached.at <= HEAD_REUSE_MS) return cached.value;
    for (const [height, entry] of this.canonical) if (now - entry.at > HEAD_REUSE_MS) this.canonical.delete(height);
    const value = this.chain.blockHashAt!(blockNumber);
    this.canonical.set(blockNumber, { at: now, value });
    value.catch(() => {
      if (this.canonical.get(blockNumber)?.value === value) this.canonical.delete(blockNumber);
    });
    return value;
  }

  /** The chain's head, read at most once per HEAD_REUSE_MS for all jobs (a lower bound of the head: it only
   *  makes a settlement look less deep). */
  private recentHead(): Promise<bigint> {
    const now = Date.now();
    if (!this.head || now - this.head.at > HEAD_REUSE_MS) {
      const value = this.chain.headBlock();
      this.head = { at: now, value };
      value.then(
        (head) => this.observePace(head),
        () => {
          if (this.head?.value === value) this.head = undefined;
        },
      );
    }
    return this.head.value;
  }

  private async sendFailJob(job: JobRef, reason: string, timedOut: boolean): Promise<Hex | undefined> {
    try {
      const hash = await this.chain.failJob(job.jobKey);
      await this.jobs.update(job.jobId, { fail_tx: hash, ...(timedOut ? { refund_tx: hash } : {}) });
      await this.chain.waitMined(hash);
      return hash;
    } catch (error) {
      // Not open any more (closed by someone else), or the chain is unreachable: the escrow, if still open, is
      // refunded by the sweeper after the chain deadline.
      const revert = this.chain.refusalOf(error);
      // No job on chain yet: the lock is still on its way (a fee spike, a dropped transaction) and its job is closed
      // before it lands. The row says so for the webhooks (no job.submitted then); the escrow's return follows the
      // lock (openEscrow.ts, returnLateLock), or the sweeper's after the deadline.
      const beforeLock =
        revert === "JobNotInStatus" &&
        (await this.chain.jobOf(job.jobKey).then(
          (onChain) => onChain.status === "none",
          () => false,
        ));
      if (beforeLock) this.logger.warn({ job_id: job.jobId }, "job closed before its lock was mined");
      else this.logger.error({ err: error, job_id: job.jobId, revert }, "failJob failed; left to the sweeper");
      await this.jobs
        .update(job.jobId, { error: reason, ...(beforeLock ? { closed_before_lock: true } : {}) })
        .catch(() => undefined);
      // The mark must be in the table before the lock's JobOpened is ingested, which on an automining chain is
      // milliseconds after the lock lands: with the next tick, not the hold bound.
      if (beforeLock) this.jobs.writeSoon(job.jobId);
      return undefined;
    }
  }

  /**
   * Refunds after the deadline and returns the transaction that refunded the job (issue 23 item 5): a refund the
   * chain still finds early (`JobNotExpired`: its block time trails the clock the wait used) is sent again shortly,
   * and a job someone else refunded meanwhile (the sweeper, a peer gateway) reports THAT transaction.
   */
  private async sendRefund(job: JobRef, deadline: bigint): Promise<Hex | undefined> {
    try {
      await this.chain.waitForDeadline(deadline);
      for (let attempt = 1; ; attempt++) {
        try {
          const hash = await this.chain.refund(job.jobKey);
          await this.jobs.update(job.jobId, { refund_tx: hash });
          await this.chain.waitMined(hash);
          return hash;
        } catch (error) {
          const refusal = this.chain.refusalOf(error);
          if (refusal === "JobNotExpired" && attempt < REFUND_ATTEMPTS) {
            await new Promise((resolve) => setTimeout(resolve, this.options.refundRetryMs ?? 1_000));
            continue;
          }
          if (refusal === "JobNotInStatus") {
            const hash = await this.chain.refundTxOf(job.jobKey);
            if (hash) {
              this.logger.info({ job_id: job.jobId, tx: hash }, "job refunded by another sender");
              await this.jobs.update(job.jobId, { refund_tx: hash });
              return hash;
            }
          }
          throw error;
        }
      }
    } catch (error) {
      const refusal = this.chain.refusalOf(error);
      if (refusal === "JobNotInStatus")
        this.logger.info({ job_id: job.jobId }, "refund not needed: job already closed");
      else this.logger.error({ err: error, job_id: job.jobId, revert: refusal }, "refund failed; left to the sweeper");
      return undefined;
    }
  }
}
