import type { TierName } from "./tiers.js";

/** A catalog entry as governance adds it (`IModelCatalog.ModelParams` plus the id). */
export interface CatalogModel {
  id: string;
  parameters: string;
  contextWindow: number;
  tier: TierName;
  creditsPerRequest: number;
  creditsPer1kTokens: number;
  ownedBy: string;
}

/** Tier prices in credits (per request, per 1,000 tokens beyond the long-completion threshold). */
export const TIER_PRICES: Readonly<Record<TierName, { creditsPerRequest: number; creditsPer1kTokens: number }>> = {
  max: { creditsPerRequest: 40, creditsPer1kTokens: 20 },
  pro: { creditsPerRequest: 18, creditsPer1kTokens: 9 },
  standard: { creditsPerRequest: 8, creditsPer1kTokens: 4 },
  lite: { creditsPerRequest: 2, creditsPer1kTokens: 1 },
};

/** The models listed at launch (docs/DESIGN.md, "Launch catalog"), in index order (1-based on chain). */
export const LAUNCH_CATALOG: readonly CatalogModel[] = [
  model("llama-3.3-70b-instruct", "70B", 128_000, "max", "meta"),
  model("deepseek-r1-distill-llama-70b", "70B", 128_000, "max", "deepseek"),
  model("gemma-3-27b-it", "27B", 128_000, "pro", "google"),
  model("qwen2.5-14b-instruct", "14B", 32_768, "pro", "qwen"),
  model("llama-3.1-8b-instruct", "8B", 32_768, "standard", "meta"),
  model("mistral-7b-instruct-v0.3", "7B", 32_768, "standard", "mistralai"),
  model("llama-3.2-3b-instruct", "3B", 128_000, "lite", "meta"),
  model("qwen3-1.7b", "1.7B", 32_768, "lite", "qwen"),
];

function model(id: string, parameters: string, contextWindow: number, tier: TierName, ownedBy: string): CatalogModel {
  return { id, parameters, contextWindow, tier, ...TIER_PRICES[tier], ownedBy };
}
