// Mirror of contracts/libraries/Pricing.sol and the escrow's credit units. Keep the two in step.

/** Completions up to this many tokens cost the flat per-request price. */
export const LONG_COMPLETION_THRESHOLD = 500n;
/** The per-token price is quoted per this many tokens. */
export const TOKENS_PER_PRICE_UNIT = 1000n;
/** Stablecoin units (6 decimals) per credit: 1 stablecoin = 100 credits. */
export const UNIT_PER_CREDIT = 10_000n;
/** Credits per whole stablecoin. */
export const CREDITS_PER_USDG = 100;
/** Smallest deposit, stablecoin units (1 stablecoin). */
export const MIN_DEPOSIT = 1_000_000n;
/** Basis points in 100%. */
export const BPS = 10_000n;

export interface ModelPrices {
  creditsPerRequest: number | bigint;
  creditsPer1kTokens: number | bigint;
}

/** Credits the pricing rule charges for `completionTokens` (zero tokens cost nothing). */
export function priceOf(prices: ModelPrices, completionTokens: number | bigint): bigint {
  const tokens = BigInt(completionTokens);
  const perRequest = BigInt(prices.creditsPerRequest);
  if (tokens === 0n) return 0n;
  if (tokens <= LONG_COMPLETION_THRESHOLD) return perRequest;
  const extra = (tokens - LONG_COMPLETION_THRESHOLD) * BigInt(prices.creditsPer1kTokens);
  return perRequest + (extra + TOKENS_PER_PRICE_UNIT - 1n) / TOKENS_PER_PRICE_UNIT;
}

/** Credits locked at `openJob`: the worst case for the request's `max_tokens`. */
export function escrowFor(prices: ModelPrices, maxTokens: number | bigint): bigint {
  return priceOf(prices, maxTokens);
}

/** Credits charged at settlement: the price of the output, never more than the lock. */
export function chargeFor(prices: ModelPrices, completionTokens: number | bigint, creditsLocked: bigint): bigint {
  const price = priceOf(prices, completionTokens);
  return price < creditsLocked ? price : creditsLocked;
}

/** Stablecoin units worth `credits`. */
export function creditsToUnits(credits: bigint): bigint {
  return credits * UNIT_PER_CREDIT;
}

/** The API's `usdg_value` of a credit amount: credits / 100, as a number. */
export function creditsToUsdg(credits: number | bigint): number {
  return Number(credits) / CREDITS_PER_USDG;
}

/** How a charge splits between treasury (fee) and worker, in stablecoin units, as the escrow computes it. */
export function splitCharge(
  creditsCharged: bigint,
  feeBps: number | bigint,
): { workerAmount: bigint; feeAmount: bigint } {
  const units = creditsToUnits(creditsCharged);
  const feeAmount = (units * BigInt(feeBps)) / BPS;
  return { workerAmount: units - feeAmount, feeAmount };
}
