import { disputeRequestSchema } from "@credit-metered/client/http";
import type { GatewayDeps } from "../../deps.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { parseOrThrow } from "../../http/validate.js";
import { disputeJob, jobToDispute } from "../../jobs/disputeJob.js";
import type { Endpoint } from "../endpoint.js";
import { disputeResultSchema } from "@credit-metered/client/http";

/** `POST /v1/jobs/{job_id}/dispute` (spec): the decision and the chain work are `api/jobs/disputeJob.ts`. */
export const disputeJobEndpoint: Endpoint<GatewayDeps> = {
  method: "post",
  path: "/v1/jobs/:job_id/dispute",
  access: "apiKey",
  openapi: {
    operationId: "disputeJob",
    summary: "Compare the received output's hash with the worker's proof; a mismatch opens an on-chain dispute",
    tag: "Jobs",
    requestBody: disputeRequestSchema,
    response: {
      status: 200,
      description: "Dispute opened, or the hashes match.",
      body: disputeResultSchema,
      headers: ["x-service-job-id"],
    },
    errors: [
      "invalid_request",
      "payload_too_large",
      "unsupported_media_type",
      "job_not_found",
      "dispute_already_open",
      "dispute_window_expired",
      "job_not_disputable",
    ],
  },
  handler: (deps) => async (req, res) => {
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const body = parseOrThrow(disputeRequestSchema, req.body ?? {});
    const job = await jobToDispute(deps, auth.keyHash, String(req.params["job_id"]));
    res.setHeader("x-service-job-id", job.resource.id);
    res.json(await disputeJob(deps, job, body.received_output_hash));
  },
};
