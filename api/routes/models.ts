import { Router } from "express";
import type { Model } from "@credit-metered/client/http";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";
import { NO_QUERY, parseQuery } from "../http/parseQuery.js";
import type { ModelInfo } from "../index/modelDirectory.js";
import { markStale } from "../index/staleness.js";
import { modelTrustOf, type ModelTrustFigures } from "../jobs/modelTrust.js";

/** The Model resource (spec) with its `service` extension: the spec's fields, then the trust figures. */
function toModelResource(deps: GatewayDeps, model: ModelInfo, activeWorkers: number, trust: ModelTrustFigures): Model {
  return {
    id: model.id,
    object: "model",
    created: model.created,
    owned_by: model.ownedBy,
    service: {
      tier: model.tier,
      credits_per_request: model.creditsPerRequest,
      credits_per_1k_tokens: model.creditsPer1kTokens,
      active_workers: activeWorkers,
      median_latency_ms: deps.latency.modelMedian(model.id),
      parameters: model.parameters,
      context_window: model.contextWindow,
      ...trust,
    },
  };
}

export type ModelResource = Model;

/** Every listed model with at least one healthy worker (spec rule 4), as Model resources. */
export async function listedModelResources(deps: GatewayDeps): Promise<ModelResource[]> {
  const trust = modelTrustOf(deps);
  const data: ModelResource[] = [];
  for (const model of await deps.models.all()) {
    const workers = deps.workers.candidates(model.id).length;
    if (workers > 0) data.push(toModelResource(deps, model, workers, await trust.of(model.id)));
  }
  return data;
}

/** GET /v1/models and /v1/models/{model_id}: listed models with at least one healthy worker (spec rule 4). */
export function modelsRouter(deps: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/models", async (req, res) => {
    parseQuery(req, NO_QUERY);
    const data = await listedModelResources(deps);
    markStale(res, catalogAgeSeconds(deps));
    res.json({ object: "list", data });
  });

  router.get("/v1/models/:model_id", async (req, res) => {
    parseQuery(req, NO_QUERY);
    const model = await deps.models.get(req.params.model_id);
    const workers = model ? (await deps.workers.candidatesFresh(model.id)).length : 0;
    // A model without a worker is not listed, so it is as unknown here as in the list (spec rule 4).
    if (!model || workers === 0) {
      throw new ApiError("model_not_found", {
        param: "model_id",
        message: `The model '${req.params.model_id}' does not exist.`,
      });
    }
    markStale(res, catalogAgeSeconds(deps));
    res.json(toModelResource(deps, model, workers, await modelTrustOf(deps).of(model.id)));
  });

  return router;
}

/** The catalog shown is as old as the index lag, or older when the last catalog read is served (index away). */
function catalogAgeSeconds(deps: GatewayDeps): number {
  const cacheAge = deps.models.ageMs() / 1000;
  return Math.max(deps.indexLag.snapshot().lagSeconds ?? 0, deps.index.unavailableSince === undefined ? 0 : cacheAge);
}
