import type { Hex } from "viem";
import { fromProofHash, toProofHash } from "@credit-metered/client";
import { revertOf } from "../chain/revertOf.js";
import type { DisputeResult } from "@credit-metered/client/http";
import type { Logger } from "pino";
import type { EscrowChain } from "../chain/escrowChain.js";
import { ApiError } from "../errors/ApiError.js";
import type { JobLifecycle } from "./jobLifecycle.js";
import { loadJob, type JobReadDeps, type LoadedJob } from "./loadJob.js";

/** What a dispute uses: the escrow (open it, wait for it), the lifecycle (→ disputed), the dispute windows. */
export interface DisputeDeps {
  chain: Pick<EscrowChain, "openDispute" | "sender">;
  lifecycle: Pick<JobLifecycle, "disputeOpened">;
  deployment: { params: { disputeWindow: number; arbitrationWindow: number } };
  logger: Logger;
}

/** How long a dispute on a job still settling waits for the settlement to be mined and indexed. */
const SETTLEMENT_WAIT_MS = 20_000;

/**
 * The key's job as it stands once any settlement in progress has landed (up to 20 s): a job still settling is
 * waited for rather than refused. Unknown to this key: 404 `job_not_found`.
 */
export async function jobToDispute(deps: JobReadDeps, keyHash: Hex, jobId: string): Promise<LoadedJob> {
  const job = await loadJob(deps, keyHash, jobId);
  if (!job) throw new ApiError("job_not_found");
  const until = Date.now() + SETTLEMENT_WAIT_MS;
  let current = job;
  while (["pending", "processing", "settling"].includes(current.resource.status) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = (await loadJob(deps, keyHash, job.resource.id)) ?? current;
  }
  return current;
}

/**
 * A client's dispute of a settled job (spec, `POST /v1/jobs/{job_id}/dispute`): the hash it received is compared
 * with the worker's proof; equal, nothing happens; different, the dispute is opened on chain and the job moves to
 * `disputed` (job lifecycle). Not settled → 422 `job_not_disputable`; already disputed → 409
 * `dispute_already_open`; too late → 422 `dispute_window_expired`.
 */
export async function disputeJob(deps: DisputeDeps, job: LoadedJob, yourHash: string): Promise<DisputeResult> {
  const indexed = job.indexed;
  if (job.resource.status === "disputed") throw new ApiError("dispute_already_open");
  if (
    !indexed ||
    !indexed.outputHash ||
    indexed.finalTokenAt == null ||
    !indexed.worker ||
    indexed.creditsCharged == null ||
    job.resource.status !== "settled"
  ) {
    throw new ApiError("job_not_disputable", {
      message: `Only a settled job can be disputed; this job is ${job.resource.status}.`,
    });
  }

  // The window runs from the receipt's final-token time (whole seconds, the worker's wall clock) and is measured
  // here to the millisecond: a request 60.2 s after that second is late. The escrow re-checks with its block time
  // for an actual dispute (a reverted DisputeWindowExpired is the same 422).
  const windowEndMs = (Number(indexed.finalTokenAt) + deps.deployment.params.disputeWindow) * 1000;
  if (Date.now() > windowEndMs) throw new ApiError("dispute_window_expired");

  const workerHash = toProofHash(indexed.outputHash);
  if (yourHash === workerHash) {
    return {
      job_id: job.resource.id,
      dispute_opened: false,
      your_hash: yourHash,
      worker_hash: workerHash,
      message: "The hashes match: what you received is what the worker proved. No dispute was opened.",
    };
  }
  let disputeTx: Hex;
  try {
    disputeTx = await deps.chain.openDispute(
      indexed.jobKey,
      {
        wallet: indexed.wallet,
        worker: indexed.worker,
        outputHash: indexed.outputHash,
        creditsCharged: indexed.creditsCharged,
        finalTokenAt: indexed.finalTokenAt,
      },
      fromProofHash(yourHash),
    );
    await deps.chain.sender.waitMined(disputeTx);
  } catch (error) {
    throw mapDisputeRevert(error);
  }
  // Read-your-write: the job shows `disputed` from now on, before the index has the dispute (toJobResource).
  await deps.lifecycle
    .disputeOpened(job.resource.id)
    .catch((error: unknown) =>
      deps.logger.warn({ err: error, job_id: job.resource.id }, "dispute opened but not recorded locally"),
    );
  return {
    job_id: job.resource.id,
    dispute_opened: true,
    your_hash: yourHash,
    worker_hash: workerHash,
    dispute_tx: disputeTx,
    arbitration_window_hours: Math.round(deps.deployment.params.arbitrationWindow / 3600),
  };
}

function mapDisputeRevert(error: unknown): unknown {
  const revert = revertOf(error);
  switch (revert?.name) {
    case "DisputeWindowExpired":
      return new ApiError("dispute_window_expired");
    case "JobNotInStatus":
    case "DisputeAlreadyOpened":
      return new ApiError("dispute_already_open");
    default:
      return error;
  }
}
