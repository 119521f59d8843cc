import { z } from "zod";
import { MAX_ACTIVITY_DAYS, signedInAddress } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import { integerParam, parseQuery } from "../../http/parseQuery.js";
import type { Endpoint } from "../endpoint.js";

const activityQuery = z.object({ days: integerParam("days", 1, MAX_ACTIVITY_DAYS).default(30) });

/** `GET /app/activity`: the signed-in wallet's charges, tokens and outcomes per day (the Activity page). */
export const getActivity: Endpoint<Pick<GatewayDeps, "walletActivity" | "resolveWallet">> = {
  method: "get",
  path: "/app/activity",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    const wallet = await signedInAddress(deps, req);
    const query = parseQuery(req, activityQuery);
    res.setHeader("cache-control", "no-store");
    res.json(await deps.walletActivity.report(wallet, query.days));
  },
};
