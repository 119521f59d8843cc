/** Builders of the chat completion objects the spec describes (response and streamed chunks). */

export type FinishReason = "stop" | "length";

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface CompletionMeta {
  /** `chatcmpl-<job id>` */
  id: string;
  created: number;
  model: string;
  systemFingerprint: string;
}

export function completionIdOf(jobId: string): string {
  return `chatcmpl-${jobId}`;
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

export function completionObject(meta: CompletionMeta, content: string, finishReason: FinishReason, usage: Usage) {
  return {
    id: meta.id,
    object: "chat.completion" as const,
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    choices: [
      { index: 0, message: { role: "assistant" as const, content }, logprobs: null, finish_reason: finishReason },
    ],
    usage,
  };
}

export type ChunkDelta = { role: "assistant"; content: string } | { content: string } | Record<string, never>;

export function chunkObject(meta: CompletionMeta, delta: ChunkDelta, finishReason: FinishReason | null) {
  return {
    id: meta.id,
    object: "chat.completion.chunk" as const,
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The extra chunk of `stream_options.include_usage`: no choices, the usage of the whole request. */
export function usageChunkObject(meta: CompletionMeta, usage: Usage) {
  return {
    id: meta.id,
    object: "chat.completion.chunk" as const,
    created: meta.created,
    model: meta.model,
    system_fingerprint: meta.systemFingerprint,
    choices: [],
    usage,
  };
}
