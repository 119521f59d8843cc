import type { Hex } from "viem";
import type { GatewayDeps } from "../deps.js";
import { revertOf } from "../chain/revertOf.js";
import { failJob, refundJob, settleJob } from "./closeJob.js";
import type { GatewayJobRow } from "./jobStore.js";

/** A stored receipt whose settlement has not shown up after this long is sent again. */
const SETTLEMENT_RETRY_AFTER_MS = 30_000;
/** Receipts the chain refuses for good: settling again cannot help, so the escrow goes back. */
const FINAL_SETTLEMENT_REVERTS = new Set(["WorkerNotEligible", "ReceiptTimeInvalid", "SettlementWindowClosed"]);

/**
 * Recovery and the background sweep (ARCHITECTURE "Timeouts and failures": nothing stays locked). For each job
 * left open that this process is not running: a stored verified receipt is settled; without one the escrow is
 * refunded once the chain deadline has passed. Expired open jobs the index knows about are refunded too (a
 * crash between openJob and recording it, another replica's leftovers).
 */
export async function sweepJobs(deps: GatewayDeps): Promise<void> {
  const chainNow = await chainTime(deps);
  const seen = new Set<string>();
  for (const row of await deps.jobs.listOpen()) {
    seen.add(row.job_id);
    if (deps.activeJobs.has(row.job_id)) continue;
    // Another live gateway's job (docs/DESIGN.md, "Several gateways"): it closes it, or takes it over when dead.
    if (deps.leases && !deps.leases.mayClose(row)) continue;
    try {
      await sweepOne(deps, row, chainNow);
    } catch (error) {
      deps.logger.error({ err: error, job_id: row.job_id }, "sweep failed for job");
    }
  }
  try {
    for (const job of await deps.index.expiredOpenJobs(chainNow)) {
      if (deps.activeJobs.has(job.id) || seen.has(job.id)) continue;
      await refundJob(deps, { jobId: job.id, jobKey: job.jobKey, deadline: job.deadline }, true);
    }
  } catch (error) {
    deps.logger.warn({ err: error }, "sweep of expired indexed jobs failed");
  }
}

async function sweepOne(deps: GatewayDeps, row: GatewayJobRow, chainNow: bigint): Promise<void> {
  const jobKey = row.job_key as Hex;
  const onChain = await deps.chain.jobOf(jobKey);
  if (onChain.status === "none") {
    // openJob never mined (refused, dropped, or crashed before sending): nothing is locked. A row whose
    // transaction was never sent (a crash between writing the row and sending) is closed after a short grace that
    // only covers another replica still sending it; a sent one gets time to be mined.
    const age = Date.now() - row.created_at.getTime();
    const grace = row.escrow_tx === null ? deps.config.ESCROW_UNSENT_GRACE_MS : 5 * 60_000;
    if (age > grace)
      await deps.jobs.update(row.job_id, {
        status: "failed",
        error: row.escrow_tx === null ? "escrow never sent" : "escrow never opened",
      });
    return;
  }
  if (onChain.status !== "open") {
    const status = onChain.status === "dispute_upheld" ? "refunded" : onChain.status;
    await deps.jobs.update(row.job_id, { status });
    return;
  }
  const job = { jobId: row.job_id, jobKey, deadline: onChain.deadline };
  if (row.receipt && row.signature) {
    if (Date.now() - row.updated_at.getTime() < SETTLEMENT_RETRY_AFTER_MS) return;
    deps.logger.info({ job_id: row.job_id }, "recovery: settling a stored receipt");
    const ticket = await settleJob(deps, job, row.receipt, row.signature as Hex, row.worker ?? "");
    try {
      await ticket.mined;
    } catch (error) {
      const revert = revertOf(error);
      if (revert && FINAL_SETTLEMENT_REVERTS.has(revert.name))
        await failJob(deps, job, `settlement refused: ${revert.name}`);
    }
    return;
  }
  if (chainNow > onChain.deadline) {
    deps.logger.info({ job_id: row.job_id }, "recovery: refunding an expired job");
    await refundJob(deps, job, true);
  }
}

async function chainTime(deps: GatewayDeps): Promise<bigint> {
  const wall = BigInt(Math.floor(Date.now() / 1000));
  try {
    const block = await deps.chain.latestBlockTimestamp();
    return block > wall ? block : wall;
  } catch {
    return wall;
  }
}
