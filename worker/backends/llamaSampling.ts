import type { LLamaChatGenerateResponseOptions, LLamaContextualRepeatPenalty } from "node-llama-cpp";
import type { GenerationRequest } from "./types.js";

export type LlamaSampling = Pick<
  LLamaChatGenerateResponseOptions,
  "temperature" | "topP" | "topK" | "seed" | "repeatPenalty"
>;

/** llama.cpp seeds are 32-bit; OpenAI's may be any safe integer, negative ones included. */
function seedOf(seed: number): number {
  return Number(BigInt.asUintN(32, BigInt(seed)));
}

/**
 * OpenAI's sampling parameters in node-llama-cpp's terms, with OpenAI's defaults for what the request leaves out
 * (temperature 1, no top-k, no penalties) rather than node-llama-cpp's (greedy, a 1.1 repeat penalty).
 *
 * Penalties: llama.cpp subtracts `count × frequency_penalty + (count > 0) × presence_penalty` from a token's logit,
 * the formula OpenAI documents, so both pass through unchanged (negative values included). The window is the
 * whole completion so far (OpenAI's "text so far"), the multiplicative repeat penalty stays off.
 */
export function llamaSamplingOf(request: GenerationRequest, maxTokens: number): LlamaSampling {
  const frequencyPenalty = request.frequencyPenalty ?? 0;
  const presencePenalty = request.presencePenalty ?? 0;
  const repeatPenalty: false | LLamaContextualRepeatPenalty =
    frequencyPenalty === 0 && presencePenalty === 0
      ? false
      : { penalty: 1, frequencyPenalty, presencePenalty, lastTokens: Math.max(maxTokens, 1), penalizeNewLine: true };
  return {
    temperature: request.temperature ?? 1,
    topP: request.topP ?? 1,
    topK: 0,
    ...(request.seed === undefined ? {} : { seed: seedOf(request.seed) }),
    repeatPenalty,
  };
}
