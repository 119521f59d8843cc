import type { GatewayDeps } from "../../deps.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { catalogAgeSeconds, listedModelResources } from "../../readModel/modelResources.js";
import { markStale } from "../../readModel/staleness.js";
import type { Endpoint } from "../endpoint.js";
import { modelListSchema } from "@credit-metered/client/http";
import { STALE_HEADER } from "../../readModel/staleness.js";

/** `GET /v1/models` (spec): listed models with at least one healthy worker (rule 4), with their trust figures. */
export const listModels: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/models",
  access: "apiKey",
  openapi: {
    operationId: "listModels",
    summary: "List models with at least one active worker",
    tag: "Models",
    response: { status: 200, description: "The models.", body: modelListSchema, headers: [STALE_HEADER] },
    errors: [],
  },
  handler: (deps) => async (req, res) => {
    parseQuery(req, NO_QUERY);
    const data = await listedModelResources(deps);
    markStale(res, catalogAgeSeconds(deps));
    res.json({ object: "list", data });
  },
};
