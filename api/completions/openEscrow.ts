import type { Hex } from "viem";
import { jobIdToBytes32, newJobId } from "../../contracts/client/index.js";
import { mapOpenJobRevert } from "../chain/mapOpenJobRevert.js";
import type { GatewayDeps } from "../deps.js";
import { jobLifecycleOf } from "../jobs/jobLifecycleOf.js";
import { ApiError } from "../errors/ApiError.js";
import type { PreparedCompletion } from "./prepareCompletion.js";

export interface OpenedJob {
  jobId: string;
  jobKey: Hex;
  escrowTx: Hex;
  creditsLocked: number;
  /** Available credits right after the lock (JobOpened.balanceAfter, or estimated in `submitted` lock mode). */
  balanceAfterLock: number;
  /** Chain deadline, unix seconds: after it anyone may refund. */
  deadline: bigint;
  /** When the gateway started the job (its own timeout counts from here). */
  startedAt: number;
  /** In `submitted` lock mode: settles when the lock is mined; rejects if it reverted. */
  lockMined: Promise<void>;
}

/**
 * Locks the escrow before any worker sees the job (ARCHITECTURE "Lock"). The gateway_job row is written first,
 * so a crash between sending and recording leaves a row recovery can find.
 */
export async function openEscrow(deps: GatewayDeps, prepared: PreparedCompletion): Promise<OpenedJob> {
  const startedAt = Date.now();
  const jobId = newJobId(startedAt);
  const jobKey = jobIdToBytes32(jobId);
  await deps.jobs.insert({
    jobId,
    jobKey,
    wallet: prepared.wallet,
    keyHash: prepared.keyHash,
    model: prepared.model.id,
    tier: prepared.model.tier,
    stream: prepared.request.stream,
    maxTokens: prepared.maxTokens,
    creditsLocked: prepared.creditsToLock,
    promptTokens: prepared.promptTokens,
  });

  let escrowTx: Hex;
  try {
    escrowTx = await deps.chain.openJob(jobKey, prepared.keyHash, prepared.model.modelKey, prepared.maxTokens);
  } catch (error) {
    const mapped = mapOpenJobRevert(error, { model: prepared.model.id, tier: prepared.model.tier });
    await jobLifecycleOf(deps).lockRefused(jobId, mapped ? `openJob refused: ${mapped.code}` : "openJob failed");
    if (mapped) throw mapped;
    deps.logger.error({ err: error, job_id: jobId }, "openJob failed");
    throw new ApiError("service_unavailable", { message: "The escrow transaction could not be sent. Retry shortly." });
  }
  await deps.jobs.update(jobId, { escrow_tx: escrowTx });

  const estimatedDeadline = BigInt(Math.floor(startedAt / 1000) + deps.deployment.params.jobTimeout);
  const opened: OpenedJob = {
    jobId,
    jobKey,
    escrowTx,
    creditsLocked: prepared.creditsToLock,
    balanceAfterLock: prepared.creditsAvailable - prepared.creditsToLock,
    deadline: estimatedDeadline,
    startedAt,
    lockMined: Promise.resolve(),
  };

  const mined = deps.chain.sender.waitMined(escrowTx).then(async (receipt) => {
    const facts = deps.chain.openedJobOf(receipt);
    if (facts) {
      opened.deadline = facts.deadline;
      opened.balanceAfterLock = Number(facts.balanceAfter);
      opened.creditsLocked = Number(facts.creditsLocked);
    }
    await deps.jobs.update(jobId, { deadline: opened.deadline });
  });

  if (deps.config.LOCK_MODE === "confirmed") {
    try {
      await mined;
    } catch (error) {
      await jobLifecycleOf(deps).lockRefused(jobId, "openJob reverted");
      deps.logger.error({ err: error, job_id: jobId, tx: escrowTx }, "openJob reverted");
      throw new ApiError("service_unavailable", { message: "The escrow transaction reverted. Retry shortly." });
    }
  } else {
    opened.lockMined = mined.catch(async (error: unknown) => {
      await jobLifecycleOf(deps)
        .lockRefused(jobId, "openJob reverted")
        .catch(() => undefined);
      throw error;
    });
    opened.lockMined.catch(() => undefined);
  }
  return opened;
}
