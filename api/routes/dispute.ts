import { Router } from "express";
import type { Hex } from "viem";
import { fromProofHash, toProofHash } from "@credit-metered/client";
import { disputeRequestSchema } from "@credit-metered/client/http";
import { revertOf } from "../chain/revertOf.js";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";
import { authOf } from "../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";
import { parseOrThrow } from "../http/validate.js";
import { jobLifecycleOf } from "../jobs/jobLifecycleOf.js";
import { loadJob, type LoadedJob } from "../jobs/loadJob.js";

/** How long a dispute on a job still settling waits for the settlement to be mined and indexed. */
const SETTLEMENT_WAIT_MS = 20_000;

/** POST /v1/jobs/{job_id}/dispute (spec): compare the client's hash with the proof; differ → on-chain dispute. */
export function disputeRouter(deps: GatewayDeps): Router {
  const router = Router();
  router.post("/v1/jobs/:job_id/dispute", async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const body = parseOrThrow(disputeRequestSchema, req.body ?? {});
    let job = await loadJob(deps, auth.keyHash, req.params.job_id);
    if (!job) throw new ApiError("job_not_found");
    job = await waitForSettlement(deps, auth.keyHash, job);
    const indexed = job.indexed;
    res.setHeader("x-service-job-id", job.resource.id);
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

    const yourHash = body.received_output_hash;
    const workerHash = toProofHash(indexed.outputHash);
    if (yourHash === workerHash) {
      res.json({
        job_id: job.resource.id,
        dispute_opened: false,
        your_hash: yourHash,
        worker_hash: workerHash,
        message: "The hashes match: what you received is what the worker proved. No dispute was opened.",
      });
      return;
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
    await jobLifecycleOf(deps)
      .disputeOpened(job.resource.id)
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, job_id: job.resource.id }, "dispute opened but not recorded locally"),
      );
    res.json({
      job_id: job.resource.id,
      dispute_opened: true,
      your_hash: yourHash,
      worker_hash: workerHash,
      dispute_tx: disputeTx,
      arbitration_window_hours: Math.round(deps.deployment.params.arbitrationWindow / 3600),
    });
  });
  return router;
}

async function waitForSettlement(deps: GatewayDeps, keyHash: Hex, job: LoadedJob): Promise<LoadedJob> {
  const until = Date.now() + SETTLEMENT_WAIT_MS;
  let current = job;
  while (["pending", "processing", "settling"].includes(current.resource.status) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    current = (await loadJob(deps, keyHash, job.resource.id)) ?? current;
  }
  return current;
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
