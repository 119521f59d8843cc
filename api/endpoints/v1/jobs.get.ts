import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { loadJob } from "../../jobs/loadJob.js";
import { markStale } from "../../readModel/staleness.js";
import { withDeadline } from "../../runtime/withDeadline.js";
import type { Endpoint } from "../endpoint.js";
import { jobSchema } from "@credit-metered/client/http";
import { JOB_HEADERS } from "../../openapi/operation.js";
import { STALE_HEADER } from "../../readModel/staleness.js";

/** `GET /v1/jobs/{job_id}` (spec): one of the authenticated key's jobs, with its transaction headers. */
export const getJob: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/jobs/:job_id",
  access: "apiKey",
  openapi: {
    operationId: "getJob",
    summary: "One job of the key",
    tag: "Jobs",
    response: { status: 200, description: "The job.", body: jobSchema, headers: [...JOB_HEADERS, STALE_HEADER] },
    errors: ["job_not_found"],
  },
  handler: (deps) => async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const [job, available] = await Promise.all([
      loadJob(deps, auth.keyHash, String(req.params["job_id"])),
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
  },
};
