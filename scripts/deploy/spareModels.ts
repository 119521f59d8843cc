// Spare catalog models for test stacks. A catalog change waits 2 days (ModelCatalog), so a test on a running
// stack, whose chain time follows the wall clock, cannot add a model of its own; the test stacks list these at
// deployment instead (`npm run deploy -- --spare-models N`), and each test claims one (test/support/workers.ts).
// Public deployments list none.
import { TIER_PRICES, type CatalogModel, type TierName } from "@credit-metered/client";

/**
 * The shapes tests ask for: a tier and a context window, and how many times `perShape` of it a stack lists. Most
 * tests want a lite model; the catalog's constructor arguments count against the 49,152-byte initcode limit, so
 * the rarer shapes get fewer.
 */
export const SPARE_MODEL_SHAPES: readonly { tier: TierName; contextWindow: number; weight: number }[] = [
  { tier: "lite", contextWindow: 32_768, weight: 4 },
  { tier: "standard", contextWindow: 32_768, weight: 1 },
  { tier: "max", contextWindow: 128_000, weight: 1 },
  { tier: "lite", contextWindow: 2_048, weight: 1 },
];

/** The id of spare model `n` (1-based) of a shape. */
export function spareModelId(tier: TierName, contextWindow: number, n: number): string {
  return `spare-${tier}-${contextWindow}-${n}`;
}

/** `perShape` × weight spare models of every shape, priced as their tier. */
export function spareCatalog(perShape: number): CatalogModel[] {
  return SPARE_MODEL_SHAPES.flatMap(({ tier, contextWindow, weight }) =>
    Array.from({ length: perShape * weight }, (_, i) => ({
      id: spareModelId(tier, contextWindow, i + 1),
      parameters: "1B",
      contextWindow,
      tier,
      ...TIER_PRICES[tier],
      ownedBy: "test",
    })),
  );
}
