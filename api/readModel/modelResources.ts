import type { Model } from "@credit-metered/client/http";
import type { GatewayDeps } from "../deps.js";
import type { ModelTrustFigures } from "../jobs/modelTrust.js";
import type { ModelInfo } from "./modelDirectory.js";

type ModelDeps = Pick<GatewayDeps, "latency" | "models" | "workers" | "modelTrust">;

/** The Model resource (spec) with its `service` extension: the spec's fields, then the trust figures. */
export function toModelResource(
  deps: Pick<GatewayDeps, "latency">,
  model: ModelInfo,
  activeWorkers: number,
  trust: ModelTrustFigures,
): Model {
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
export async function listedModelResources(deps: ModelDeps): Promise<ModelResource[]> {
  const trust = deps.modelTrust;
  const data: ModelResource[] = [];
  for (const model of await deps.models.all()) {
    const workers = deps.workers.candidates(model.id).length;
    if (workers > 0) data.push(toModelResource(deps, model, workers, await trust.of(model.id)));
  }
  return data;
}

/** The catalog shown is as old as the index lag, or older when the last catalog read is served (index away). */
export function catalogAgeSeconds(deps: Pick<GatewayDeps, "models" | "indexLag" | "index">): number {
  const cacheAge = deps.models.ageMs() / 1000;
  return Math.max(deps.indexLag.snapshot().lagSeconds ?? 0, deps.index.unavailableSince === undefined ? 0 : cacheAge);
}
