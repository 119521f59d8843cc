import {
  escrowFor,
  chargeFor,
  priceOf,
  LONG_COMPLETION_THRESHOLD,
  TOKENS_PER_PRICE_UNIT,
  type ModelPrices,
} from "@credit-metered/client";

export { escrowFor, chargeFor, type ModelPrices };

/**
 * The `max_tokens` the job runs with: the client's value (or the default), never more than the room the prompt
 * leaves in the context window. Spec: only prompt tokens over the window are an error, so a larger max_tokens is
 * clamped rather than refused (README).
 */
export function effectiveMaxTokens(
  requested: number | undefined,
  defaultMax: number,
  contextWindow: number,
  promptTokens: number,
): number {
  const room = Math.max(contextWindow - promptTokens, 0);
  return Math.min(requested ?? defaultMax, room);
}

/** The most output tokens `credits` pay for under the pricing rule (at least the flat per-request range). */
export function maxTokensPaidBy(prices: ModelPrices, credits: number): number {
  const perRequest = Number(prices.creditsPerRequest);
  const per1k = Number(prices.creditsPer1kTokens);
  if (credits < perRequest) return 0;
  if (per1k === 0) return Number.MAX_SAFE_INTEGER;
  // price(n) = perRequest + ceil((n - 500) * per1k / 1000) <= credits  <=>  n <= 500 + floor((credits - perRequest) * 1000 / per1k)
  const extra = Math.floor(((credits - perRequest) * Number(TOKENS_PER_PRICE_UNIT)) / per1k);
  return Number(LONG_COMPLETION_THRESHOLD) + extra;
}

export interface EscrowSizingInput {
  prices: ModelPrices;
  /** The client's `max_tokens` (or `max_completion_tokens`), undefined when absent. */
  requested: number | undefined;
  defaultMaxTokens: number;
  contextWindow: number;
  promptTokens: number;
  /** Credits available to the wallet right now. */
  available: number;
}

export type EscrowSizing =
  | {
      ok: true;
      maxTokens: number;
      creditsToLock: number;
      /** Generation was capped to what the balance pays. */ capped: boolean;
    }
  | { ok: false; maxTokens: number; creditsRequired: number };

/**
 * How much one request locks and how many tokens it may generate: the one place escrow sizing is decided.
 *
 * - `max_tokens` given: the price of `min(max_tokens, room in the context window)`; a balance below it is
 *   `insufficient_credits` (the client asked for that much).
 * - `max_tokens` absent: the price of `min(DEFAULT_MAX_TOKENS, room)` when the balance covers it; otherwise, as long
 *   as the balance covers the model's `credits_per_request` (the spec's "tier cost"), the lock is what the balance
 *   allows and generation is capped to the tokens that lock pays for (the worker is told the capped max_tokens, and
 *   the reply ends with `finish_reason: "length"` if it reaches it). Below the tier cost: `insufficient_credits`
 *   with the tier cost as `credits_required`.
 */
export function sizeEscrow(input: EscrowSizingInput): EscrowSizing {
  const { prices, requested, available } = input;
  const maxTokens = effectiveMaxTokens(requested, input.defaultMaxTokens, input.contextWindow, input.promptTokens);
  const full = Number(priceOf(prices, maxTokens));
  if (available >= full) return { ok: true, maxTokens, creditsToLock: full, capped: false };
  if (requested !== undefined) return { ok: false, maxTokens, creditsRequired: full };
  const perRequest = Number(prices.creditsPerRequest);
  if (available < perRequest) return { ok: false, maxTokens, creditsRequired: perRequest };
  const capped = Math.min(maxTokens, maxTokensPaidBy(prices, available));
  return { ok: true, maxTokens: capped, creditsToLock: Number(priceOf(prices, capped)), capped: true };
}
