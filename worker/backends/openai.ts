import { z } from "zod";
import type { OpenAiModelConfig } from "../config.js";
import { countPromptTokens } from "../tokenizer.js";
import { readServerSentEvents } from "./readServerSentEvents.js";
import { BackendError } from "./types.js";
import type { Backend, ChatMessage, FinishReason, Generation, GenerationRequest } from "./types.js";

// Lenient on purpose: vLLM, llama.cpp, Ollama and SGLang differ in the optional fields they send.
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }).nullish(),
  error: z.unknown().optional(),
});

function upstreamBody(config: OpenAiModelConfig, request: GenerationRequest) {
  return {
    model: config.upstreamModel ?? request.model,
    messages: request.messages,
    max_tokens: request.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    ...(request.stop.length > 0 ? { stop: request.stop } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.seed === undefined ? {} : { seed: request.seed }),
    ...(request.frequencyPenalty === undefined ? {} : { frequency_penalty: request.frequencyPenalty }),
    ...(request.presencePenalty === undefined ? {} : { presence_penalty: request.presencePenalty }),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Streaming pass-through to an OpenAI-compatible server (`POST {baseUrl}/v1/chat/completions`).
 * `timeoutMs` bounds every wait on the upstream (response headers, then each chunk), not the whole completion.
 */
export function createOpenAiBackend(config: OpenAiModelConfig): Backend {
  const url = `${config.baseUrl}/v1/chat/completions`;
  return {
    kind: "openai",
    countPromptTokens(messages: readonly ChatMessage[]) {
      return countPromptTokens(messages);
    },
    async *generate(request: GenerationRequest, signal: AbortSignal): Generation {
      const idle = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const armTimer = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () => idle.abort(new Error(`no upstream data for ${config.timeoutMs} ms`)),
          config.timeoutMs,
        );
      };
      const upstreamSignal = AbortSignal.any([signal, idle.signal]);
      try {
        armTimer();
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "text/event-stream",
            ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
          },
          body: JSON.stringify(upstreamBody(config, request)),
          signal: upstreamSignal,
        });
        if (!response.ok) {
          const detail = (await response.text().catch(() => "")).slice(0, 300);
          throw new BackendError("backend_error", `upstream answered HTTP ${response.status}: ${detail}`);
        }
        if (response.body === null) throw new BackendError("backend_error", "upstream sent no body");

        let finishReason: FinishReason | undefined;
        let sawDone = false;
        let usage: { promptTokens: number; completionTokens: number } | undefined;
        for await (const data of readServerSentEvents(response.body)) {
          if (data === "[DONE]") {
            sawDone = true;
            break;
          }
          let json: unknown;
          try {
            json = JSON.parse(data);
          } catch {
            throw new BackendError("backend_error", "upstream sent a chunk that is not JSON");
          }
          const chunk = chunkSchema.safeParse(json);
          if (!chunk.success) throw new BackendError("backend_error", "upstream sent a malformed chunk");
          if (chunk.data.error !== undefined) {
            throw new BackendError("backend_error", `upstream reported an error: ${JSON.stringify(chunk.data.error)}`);
          }
          if (chunk.data.usage) {
            usage = {
              promptTokens: chunk.data.usage.prompt_tokens,
              completionTokens: chunk.data.usage.completion_tokens,
            };
          }
          const choice = chunk.data.choices?.[0];
          // Anything but "length" (stop, eos, content_filter…) ended the text on the model's side.
          if (choice?.finish_reason) finishReason = choice.finish_reason === "length" ? "length" : "stop";
          const content = choice?.delta?.content;
          if (content) {
            // The client may be slow to read; that is not the upstream's idleness.
            clearTimeout(timer);
            yield content;
            armTimer();
          }
        }
        if (!sawDone && finishReason === undefined) {
          throw new BackendError("backend_error", "upstream stream ended before the completion finished");
        }
        return { finishReason: finishReason ?? "stop", ...(usage === undefined ? {} : { usage }) };
      } catch (error) {
        if (signal.aborted) throw error;
        if (idle.signal.aborted) throw new BackendError("backend_timeout", describe(idle.signal.reason));
        if (error instanceof BackendError) throw error;
        throw new BackendError("backend_error", `upstream request failed: ${describe(error)}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
