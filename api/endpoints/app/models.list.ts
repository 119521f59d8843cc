import { signedInAddress } from "../../app/webAppContext.js";
import type { GatewayDeps } from "../../deps.js";
import { listedModelResources } from "../../readModel/modelResources.js";
import type { Endpoint } from "../endpoint.js";

/** `GET /app/models`: the Model resources of `GET /v1/models`, for the signed-in wallet (no API key needed). */
export const listAppModels: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/app/models",
  access: "webApp",
  handler: (deps) => async (req, res) => {
    await signedInAddress(deps, req);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "list", data: await listedModelResources(deps) });
  },
};
