import type { SimulatedModelConfig } from "../config.js";
import { countPromptTokens, decodeToken, encodeText } from "../tokenizer.js";
import { abortableSleep } from "./abortableSleep.js";
import { simulatedText } from "./simulatedText.js";
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

/** Deterministic offline backend with a configurable time to first token and token rate. */
export function createSimulatedBackend(config: SimulatedModelConfig): Backend {
  return {
    kind: "simulated",
    countPromptTokens(messages: readonly ChatMessage[]) {
      return countPromptTokens(messages);
    },
    async *generate(request: GenerationRequest, signal: AbortSignal): Generation {
      const plan = planSimulatedCompletion(config, request);
      const interval = 1000 / config.tokensPerSecond;
      const start = performance.now();
      // Scheduled against the start time so the rate does not drift with timer lateness.
      for (const [index, token] of plan.tokens.entries()) {
        const dueAt = start + config.ttftMs + index * interval;
        await abortableSleep(Math.max(0, dueAt - performance.now()), signal);
        yield token;
      }
      // No engine usage: the job runner's counts (the prompt counted at acceptance, one token per line) are exact.
      return { finishReason: plan.finishReason };
    },
  };
}
