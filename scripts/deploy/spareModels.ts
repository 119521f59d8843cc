// Spare catalog models for test stacks. A catalog change waits 2 days (ModelCatalog), so a test on a running
// stack, whose chain time follows the wall clock, cannot add a model of its own; the test stacks list these at
// deployment instead (`npm run deploy -- --spare-models N`), and each test claims one (test/support/workers.ts).
// Public deployments list none.
import { TIER_PRICES, type CatalogModel, type TierName } from "@credit-metered/client";

/** The shapes tests ask for: a tier and a context window. */
export const SPARE_MODEL_SHAPES: readonly { tier: TierName; contextWindow: number }[] = [
  { tier: "lite", contextWindow: 32_768 },
  { tier: "standard", contextWindow: 32_768 },
  { tier: "max", contextWindow: 128_000 },
  { tier: "lite", contextWindow: 2_048 },
];

/** The id of spare model `n` (1-based) of a shape. */
export function spareModelId(tier: TierName, contextWindow: number, n: number): string {
  return `spare-${tier}-${contextWindow}-${n}`;
}

/** `perShape` spare models of every shape, priced as their tier. */
export function spareCatalog(perShape: number): CatalogModel[] {
  return SPARE_MODEL_SHAPES.flatMap(({ tier, contextWindow }) =>
    Array.from({ length: perShape }, (_, i) => ({
      id: spareModelId(tier, contextWindow, i + 1),
      parameters: "1B",
      contextWindow,
      tier,
      ...TIER_PRICES[tier],
      ownedBy: "test",
    })),
  );
}
