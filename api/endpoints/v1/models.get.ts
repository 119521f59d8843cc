import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { catalogAgeSeconds, toModelResource } from "../../readModel/modelResources.js";
import { markStale } from "../../readModel/staleness.js";
import type { Endpoint } from "../endpoint.js";
import { modelSchema } from "@credit-metered/client/http";
import { STALE_HEADER } from "../../readModel/staleness.js";

/** `GET /v1/models/{model_id}` (spec): one listed model with a healthy worker; any other is `model_not_found`. */
export const getModel: Endpoint<GatewayDeps> = {
  method: "get",
  path: "/v1/models/:model_id",
  access: "apiKey",
  openapi: {
    operationId: "getModel",
    summary: "One model",
    tag: "Models",
    response: { status: 200, description: "The model.", body: modelSchema, headers: [STALE_HEADER] },
    errors: ["model_not_found"],
  },
  handler: (deps) => async (req, res) => {
    parseQuery(req, NO_QUERY);
    const modelId = String(req.params["model_id"]);
    const model = await deps.models.get(modelId);
    const workers = model ? (await deps.workers.candidatesFresh(model.id)).length : 0;
    // A model without a worker is not listed, so it is as unknown here as in the list (spec rule 4).
    if (!model || workers === 0) {
      throw new ApiError("model_not_found", {
        param: "model_id",
        message: `The model '${modelId}' does not exist.`,
      });
    }
    markStale(res, catalogAgeSeconds(deps));
    res.json(toModelResource(deps, model, workers, await deps.modelTrust.of(model.id)));
  },
};
