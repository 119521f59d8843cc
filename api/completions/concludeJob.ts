/**
 * How a job is charged (api/README.md "Where to read"). The whole path, in order:
 *
 * 1. Before any credit moves, `prepareCompletion` sizes the escrow: the price of `max_tokens` (pricing.ts
 *    `sizeEscrow`, the contract's pricing rule). `openEscrow` reserves that many credits in the ledger and locks
 *    them on chain (`openJobBatch`); `balanceAfterLock` is the wallet's available credits right after.
 * 2. The worker streams the answer and signs a receipt (prompt and completion tokens, output hash, times);
 *    `relayCompletion` checks it against what was relayed (`verifyReceipt`). Only a verified receipt is charged:
 *    the whole answer, or, when the client left mid-stream, the part it received (the worker's cancel receipt).
 * 3. `concludeJob` (here) hands the receipt to the lifecycle (`JobLifecycle.conclude` → `settle`): the receipt is
 *    stored with the move to `settling` (recovery settles it after a crash) and queued for the settlement batch,
 *    which is sent behind the lock without waiting for it to be mined. The row becomes `settled` once mined.
 * 4. The charge is the receipt's completion tokens at the model's price (`chargeFor`: `credits_per_request` up to
 *    500 tokens, then `credits_per_1k_tokens` per 1,000, rounded up), never more than the lock. The escrow computes
 *    the same figure from the same receipt on chain (JobSettled.creditsCharged), pays the worker and the fee, and
 *    returns the rest of the lock to the wallet: the credits remaining are `balanceAfterLock + locked − charged`.
 *
 * Nothing else charges: every other ending returns the whole lock (`not_charged`; how: jobs/jobLifecycle.ts).
 */
import type { Hex } from "viem";
import { ApiError } from "../errors/ApiError.js";
import type { JobLifecycle, SettlementHandle } from "../jobs/jobLifecycle.js";
import type { OpenedJob } from "./openEscrow.js";
import type { PreparedCompletion } from "./prepareCompletion.js";
import { chargeFor } from "./pricing.js";
import { timeoutError, withJobHeaders, type RelayOutcome } from "./relayCompletion.js";

/** What closing a job uses: only the lifecycle (the one writer of a job's status and its chain action). */
export interface ConcludeDeps {
  lifecycle: Pick<JobLifecycle, "conclude">;
}

/** What the client is charged for a job, and what its wallet has left once the settlement lands. */
export interface JobCharge {
  creditsCharged: number;
  /** Available credits after settlement: the balance after the lock plus the part of the lock not charged. */
  creditsRemaining: number;
  promptTokens: number;
  completionTokens: number;
  worker: Hex;
}

export type ConcludedJob =
  /** The whole answer was delivered with a verified receipt, now settling: the client is answered with it. */
  | {
      kind: "charged";
      answer: Extract<RelayOutcome, { kind: "delivered" }>;
      charge: JobCharge;
      /** The settlement transaction's hash as soon as it is sent, and its mined facts. */
      settlement: SettlementHandle;
    }
  /** Nothing is charged (failed, timed out, refused, or closed by another process first): the client's error. */
  | { kind: "not_charged"; error: ApiError }
  /** The client left: nobody is answered (the delivered part, if receipted, is settled all the same). */
  | { kind: "client_gone" };

/**
 * Ends a live job from the relay's outcome: the lifecycle settles, fails or refunds (the chain action included)
 * before the client hears how it ended, and the charge (or the error) comes back for the endpoint to write.
 */
export async function concludeJob(
  deps: ConcludeDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  outcome: RelayOutcome,
): Promise<ConcludedJob> {
  const conclusion = await deps.lifecycle.conclude(opened, outcome.close);
  if (outcome.kind === "client_gone") return { kind: "client_gone" };
  if (outcome.kind === "worker_failed") return { kind: "not_charged", error: outcome.error };
  if (outcome.kind === "timed_out") {
    const refundTx = conclusion.kind === "closed" ? conclusion.tx : undefined;
    return { kind: "not_charged", error: timeoutError(opened, outcome.worker, refundTx) };
  }
  if (conclusion.kind !== "settling") {
    // Closed by its lock's refusal between the relay's last look at the signal and this move: the refusal answers.
    const error = opened.refusal
      ? withJobHeaders(opened.refusal, opened, prepared, outcome.worker)
      : closedBeforeSettlement(opened, prepared, outcome.worker);
    return { kind: "not_charged", error };
  }
  const { receipt } = outcome.close;
  const creditsCharged = Number(chargeFor(prepared.model, receipt.completionTokens, BigInt(opened.creditsLocked)));
  return {
    kind: "charged",
    answer: outcome,
    settlement: conclusion.settlement,
    charge: {
      creditsCharged,
      creditsRemaining: opened.balanceAfterLock + opened.creditsLocked - creditsCharged,
      promptTokens: outcome.promptTokens,
      completionTokens: outcome.completionTokens,
      worker: outcome.worker,
    },
  };
}

/** Another process closed the job (a sweeper, a gateway taking over) before its receipt could be settled. */
function closedBeforeSettlement(opened: OpenedJob, prepared: PreparedCompletion, worker: Hex): ApiError {
  return withJobHeaders(
    new ApiError("job_failed", {
      message: "The job was closed before its receipt could be settled; nothing was charged.",
      details: { job_id: opened.jobId, credits_refunded: opened.creditsLocked },
    }),
    opened,
    prepared,
    worker,
    opened.balanceAfterLock + opened.creditsLocked,
  );
}
