import { JOB_CURSOR_PATTERN } from "@credit-metered/client";
import { z } from "zod";
import { INDEX_STATUS_OF } from "../../app/walletJobs.js";
import { signedInAddress } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import { pageLimitParam, parseQuery } from "../../http/parseQuery.js";
import type { Endpoint } from "../endpoint.js";

const jobCursor = z.string().regex(JOB_CURSOR_PATTERN).optional();
/** Paged and filtered like `GET /v1/jobs` (api/README.md "Job list"). */
const jobsQuery = z.object({
  limit: pageLimitParam(),
  before: jobCursor,
  after: jobCursor,
  status: z.enum(Object.keys(INDEX_STATUS_OF) as [keyof typeof INDEX_STATUS_OF]).optional(),
  model: z.string().min(1).max(200).optional(),
});

/** `GET /app/jobs`: the signed-in wallet's jobs from the index (every key it ever had), newest first. */
export const listAppJobs: Endpoint<Pick<GatewayDeps, "walletJobs" | "resolveWallet">> = {
  method: "get",
  path: "/app/jobs",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await signedInAddress(deps, req);
    const query = parseQuery(req, jobsQuery);
    if (query.before && query.after) {
      throw new ApiError("invalid_request", { param: "after", message: "Use either before or after, not both." });
    }
    const page = await deps.walletJobs.page(wallet, query);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "list", ...page });
  },
};
