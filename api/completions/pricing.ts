import { escrowFor, chargeFor, type ModelPrices } from "../../contracts/client/index.js";

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
