import type { SimulatedModelConfig } from "../config.js";
import { countPromptTokens, decodeToken, encodeText } from "../tokenizer.js";
import { simulatedText } from "./simulatedText.js";
import { TokenTicker } from "./tokenTicker.js";
import type { Backend, ChatMessage, FinishReason, Generation, GenerationRequest } from "./types.js";

/** Cuts the text just before the earliest stop sequence, as OpenAI-compatible servers do (the stop is not emitted). */
function cutAtStop(text: string, stop: readonly string[]): { text: string; stopped: boolean } {
  let cut = -1;
  for (const sequence of stop) {
    const index = text.indexOf(sequence);
    if (index >= 0 && (cut < 0 || index < cut)) cut = index;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/** The planned token texts and finish reason of a simulated completion (no timing). */
export function planSimulatedCompletion(
  config: SimulatedModelConfig,
  request: GenerationRequest,
): { tokens: string[]; finishReason: FinishReason } {
  const natural = simulatedText({
    model: request.model,
    messages: request.messages,
    seed: request.seed,
    minOutputTokens: config.minOutputTokens,
    maxOutputTokens: config.maxOutputTokens,
  });
  const { text } = cutAtStop(natural, request.stop);
  const ids = encodeText(text);
  const finishReason: FinishReason = ids.length > request.maxTokens ? "length" : "stop";
  return { tokens: ids.slice(0, request.maxTokens).map(decodeToken), finishReason };
}

/** Plans kept per backend: the bench and the tests repeat a handful of requests, so this many cover them. */
const PLAN_CACHE_SIZE = 64;

/**
 * `planSimulatedCompletion` remembered for the last few distinct requests. A plan is a pure function of the request
 * (and the backend's config), and computing it tokenizes the text three times: in the bench, which sends one prompt
 * again and again, it was the largest part of a simulated worker's CPU per job, none of which a real backend spends.
 */
function cachedPlanner(config: SimulatedModelConfig) {
  const plans = new Map<string, ReturnType<typeof planSimulatedCompletion>>();
  return (request: GenerationRequest) => {
    const key = JSON.stringify([
      request.model,
      request.messages,
      request.seed ?? null,
      request.stop,
      request.maxTokens,
    ]);
    let plan = plans.get(key);
    if (plan) {
      // Most recently used last, so that the oldest entry is the one evicted.
      plans.delete(key);
    } else {
      plan = planSimulatedCompletion(config, request);
      if (plans.size >= PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value!);
    }
    plans.set(key, plan);
    return plan;
  };
}

/**
 * Paces every simulated job of the process on one timer: a `setTimeout` and an abort listener per token were
 * about 5% of a simulated worker's CPU in the bench (500 tokens/s).
 */
const ticker = new TokenTicker();

/** Deterministic offline backend with a configurable time to first token and token rate. */
export function createSimulatedBackend(config: SimulatedModelConfig): Backend {
  const plan = cachedPlanner(config);
  return {
    kind: "simulated",
    countPromptTokens(messages: readonly ChatMessage[]) {
      return countPromptTokens(messages);
    },
    async *generate(request: GenerationRequest, signal: AbortSignal): Generation {
      const { tokens, finishReason } = plan(request);
      const interval = 1000 / config.tokensPerSecond;
      const start = performance.now();
      const pacer = ticker.pacer(signal);
      try {
        // Scheduled against the start time so the rate does not drift with timer lateness.
        for (const [index, token] of tokens.entries()) {
          await pacer.until(start + config.ttftMs + index * interval);
          yield token;
        }
      } finally {
        pacer.close();
      }
      // No engine usage: the job runner's counts (the prompt counted at acceptance, one token per line) are exact.
      return { finishReason };
    },
  };
}
