import { listJobsQuerySchema } from "@credit-metered/client/http";
import type { GatewayDeps } from "../../deps.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { parseQuery } from "../../http/parseQuery.js";
import { listJobs } from "../../jobs/listJobs.js";
import { markStale } from "../../readModel/staleness.js";
import type { Endpoint } from "../endpoint.js";
import { jobListSchema } from "@credit-metered/client/http";
import { STALE_HEADER } from "../../readModel/staleness.js";

/** `GET /v1/jobs` (spec): the authenticated key's jobs only, newest first (api/README.md "Job list"). */
export const listJobsEndpoint: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/jobs",
  access: "apiKey",
  openapi: {
    operationId: "listJobs",
    summary: "The key's jobs, newest first",
    tag: "Jobs",
    query: listJobsQuerySchema,
    response: { status: 200, description: "A page of jobs.", body: jobListSchema, headers: [STALE_HEADER] },
    errors: ["invalid_request"],
  },
  handler: (deps) => async (req, res) => {
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
  },
};
