import { listJobsQuerySchema } from "@credit-metered/client/http";
import type { GatewayDeps } from "../../deps.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { parseQuery } from "../../http/parseQuery.js";
import { listJobs } from "../../jobs/listJobs.js";
import { markStale } from "../../readModel/staleness.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /v1/jobs` (spec): the authenticated key's jobs only, newest first (api/README.md "Job list"). */
export const listJobsEndpoint: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/jobs",
  access: "apiKey",
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
