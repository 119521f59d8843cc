import type { Hex } from "viem";
import type { GatewayDeps } from "../deps.js";
import { revertOf } from "../chain/revertOf.js";
import type { Receipt } from "../chain/receiptTypes.js";
import type { SettlementTicket } from "../chain/settlementBatcher.js";

/** Fails an open job on chain (escrow back to the wallet) and records why. Returns the failJob tx. */
export async function failJob(
  deps: GatewayDeps,
  job: { jobId: string; jobKey: Hex },
  reason: string,
  timedOut = false,
): Promise<Hex | undefined> {
  deps.logger.warn({ job_id: job.jobId, reason }, "failing job");
  try {
    const hash = await deps.chain.failJob(job.jobKey);
    await deps.jobs.update(job.jobId, {
      status: timedOut ? "refunded" : "failed",
      fail_tx: hash,
      ...(timedOut ? { refund_tx: hash, timed_out: true } : {}),
      error: reason,
      completed_at: new Date(),
    });
    await deps.chain.sender.waitMined(hash);
    return hash;
  } catch (error) {
    // Not open any more (settled/refunded by someone else), or the chain is unreachable: the sweeper retries.
    deps.logger.error({ err: error, job_id: job.jobId, revert: revertOf(error)?.name }, "failJob failed");
    await deps.jobs.update(job.jobId, { error: reason }).catch(() => undefined);
    return undefined;
  }
}

/** Refunds a job after its chain deadline (anyone may; the gateway does it for its own jobs). */
export async function refundJob(
  deps: GatewayDeps,
  job: { jobId: string; jobKey: Hex; deadline: bigint },
  timedOut: boolean,
): Promise<Hex | undefined> {
  try {
    await deps.waitForChainDeadline(job.deadline);
    const hash = await deps.chain.refund(job.jobKey);
    await deps.jobs.update(job.jobId, {
      status: "refunded",
      refund_tx: hash,
      timed_out: timedOut,
      completed_at: new Date(),
    });
    await deps.chain.sender.waitMined(hash);
    return hash;
  } catch (error) {
    const revert = revertOf(error)?.name;
    // Someone else closed it first (another replica, the job settled meanwhile): nothing is locked.
    if (revert === "JobNotInStatus") deps.logger.info({ job_id: job.jobId }, "refund not needed: job already closed");
    else deps.logger.error({ err: error, job_id: job.jobId, revert }, "refund failed");
    return undefined;
  }
}

/**
 * Hands a verified receipt to the settlement batcher: the receipt is stored first (recovery settles it after a
 * crash), the job becomes `settling`, and `settled` once the transaction is mined.
 */
export async function settleJob(
  deps: GatewayDeps,
  job: { jobId: string; jobKey: Hex },
  receipt: Receipt,
  signature: Hex,
  worker: string,
): Promise<SettlementTicket> {
  await deps.jobs.update(job.jobId, {
    status: "settling",
    receipt,
    signature,
    worker: worker.toLowerCase(),
    output_hash: receipt.outputHash,
    final_token_at: receipt.finalTokenAt,
    prompt_tokens: receipt.promptTokens,
    completion_tokens: receipt.completionTokens,
  });
  const ticket = deps.batcher.enqueue(receipt, signature);
  ticket.submitted.then(
    (hash) => deps.jobs.update(job.jobId, { settlement_tx: hash }).catch(() => undefined),
    () => undefined,
  );
  ticket.mined.then(
    async ({ hash, receipt: txReceipt }) => {
      const facts = deps.chain.settledJobOf(txReceipt, job.jobKey);
      try {
        await deps.jobs.transition(job.jobId, ["settling", "pending", "processing"], "settled", {
          settlement_tx: hash,
          settlement_block: txReceipt.blockNumber,
          ...(facts ? { credits_charged: facts.creditsCharged } : {}),
          completed_at: new Date(),
        });
      } catch (error) {
        // The database did not answer (it is away or overloaded): the row stays `settling` and the sweeper finds
        // the job settled on chain. Never an unhandled rejection, which would take the whole process down.
        deps.logger.warn({ err: error, job_id: job.jobId }, "recording a mined settlement failed; left to the sweeper");
      }
    },
    (error: unknown) => {
      // Left `settling` with its receipt: the sweeper retries, or fails the job if the chain refuses the receipt.
      deps.logger.error({ err: error, job_id: job.jobId, revert: revertOf(error)?.name }, "settlement failed");
    },
  );
  return ticket;
}
