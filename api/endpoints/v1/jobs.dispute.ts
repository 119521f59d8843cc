import { disputeRequestSchema } from "@credit-metered/client/http";
import type { GatewayDeps } from "../../deps.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { parseOrThrow } from "../../http/validate.js";
import { disputeJob, jobToDispute } from "../../jobs/disputeJob.js";
import type { Endpoint } from "../endpoint.js";

/** `POST /v1/jobs/{job_id}/dispute` (spec): the decision and the chain work are `api/jobs/disputeJob.ts`. */
export const disputeJobEndpoint: Endpoint<GatewayDeps> = {
  method: "post",
  path: "/v1/jobs/:job_id/dispute",
  access: "apiKey",
  handler: (deps) => async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const body = parseOrThrow(disputeRequestSchema, req.body ?? {});
    const job = await jobToDispute(deps, auth.keyHash, String(req.params["job_id"]));
    res.setHeader("x-service-job-id", job.resource.id);
    res.json(await disputeJob(deps, job, body.received_output_hash));
  },
};
