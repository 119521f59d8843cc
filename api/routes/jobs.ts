import { Router } from "express";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";
import { authOf } from "../http/middleware/authenticate.js";
import { listJobsQuerySchema } from "@credit-metered/client/http";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";
import { markStale } from "../index/staleness.js";
import { listJobs } from "../jobs/listJobs.js";
import { loadJob } from "../jobs/loadJob.js";
import { withDeadline } from "../runtime/withDeadline.js";

/** GET /v1/jobs and GET /v1/jobs/{job_id} (spec): the authenticated key's jobs only. */
export function jobsRouter(deps: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/jobs", async (req, res) => {
    const auth = authOf(res);
    const query = parseQuery(req, listJobsQuerySchema);
    const { page, staleSeconds } = await listJobs(deps, auth.keyHash, {
      limit: query.limit,
      ...(query.before ? { before: query.before } : {}),
      ...(query.after ? { after: query.after } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(query.model ? { model: query.model } : {}),
    });
    markStale(res, staleSeconds);
    res.json(page);
  });

  router.get("/v1/jobs/:job_id", async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const [job, available] = await Promise.all([
      loadJob(deps, auth.keyHash, req.params.job_id),
      // The header is a courtesy: a chain node that does not answer in time leaves it out, never the job.
      withDeadline(deps.chain.availableCredits(auth.wallet), deps.config.READY_CHECK_TIMEOUT_MS, "balance").catch(
        () => undefined,
      ),
    ]);
    if (!job) throw new ApiError("job_not_found");
    markStale(res, job.staleSeconds);
    if (available !== undefined) res.setHeader("x-service-credits-remaining", String(available));
    res.setHeader("x-service-job-id", job.resource.id);
    const escrowTx = job.indexed?.escrowTx ?? job.local?.escrow_tx;
    if (escrowTx) res.setHeader("x-service-tx-hash", escrowTx);
    if (job.resource.worker_address) res.setHeader("x-service-worker", job.resource.worker_address);
    const settlementTx = job.indexed?.settlementTx ?? job.local?.settlement_tx;
    if (settlementTx) res.setHeader("x-service-settlement-tx", settlementTx);
    res.json(job.resource);
  });

  return router;
}
