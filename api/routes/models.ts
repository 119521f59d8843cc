import { Router } from "express";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";
import type { ModelInfo } from "../index/modelDirectory.js";
import { markStale } from "../index/staleness.js";

/** The Model resource (spec) with its `service` extension. */
function toModelResource(deps: GatewayDeps, model: ModelInfo, activeWorkers: number) {
  return {
    id: model.id,
    object: "model" as const,
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
    },
  };
}

/** GET /v1/models and /v1/models/{model_id}: listed models with at least one healthy worker (spec rule 4). */
export function modelsRouter(deps: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/models", async (_req, res) => {
    const models = await deps.models.all();
    markStale(res, catalogAgeSeconds(deps));
    const data = [];
    for (const model of models) {
      const workers = deps.workers.candidates(model.id).length;
      if (workers > 0) data.push(toModelResource(deps, model, workers));
    }
    res.json({ object: "list", data });
  });

  router.get("/v1/models/:model_id", async (req, res) => {
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
    res.json(toModelResource(deps, model, workers));
  });

  return router;
}

/** The catalog shown is as old as the index lag, or older when the last catalog read is served (index away). */
function catalogAgeSeconds(deps: GatewayDeps): number {
  const cacheAge = deps.models.ageMs() / 1000;
  return Math.max(deps.indexLag.snapshot().lagSeconds ?? 0, deps.index.unavailableSince === undefined ? 0 : cacheAge);
}
