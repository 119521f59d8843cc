/** Builders of the chat completion objects the spec describes (response and streamed chunks). */

import { sseEvent } from "./sseFraming.js";
import type { Usage as TokenUsage, ChatCompletion, CompletionUsage } from "@credit-metered/client/http";

export type FinishReason = ChatCompletion["choices"][number]["finish_reason"];

/**
 * `usage` of a completion object: the token counts, and the charge once known. `cost` is where OpenRouter puts
 * the cost, so tools that read it there (LiteLLM, LangChain's `response_metadata.usage`) find it; here in credits.
 */
export type Usage = TokenUsage & Partial<Pick<CompletionUsage, "cost" | "service">>;

/**
 * The service's extension of `usage`: the charge, the balance after it and the escrow and settlement
 * transactions. It rides in `usage` because every SDK passes `usage` through whole; a stream carries it only in
 * the `stream_options.include_usage` chunk.
 */
export type ServiceCharge = CompletionUsage["service"];

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

export function usageOf(promptTokens: number, completionTokens: number, charge?: ServiceCharge): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(charge ? { cost: charge.credits_charged, service: charge } : {}),
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

/**
 * The SSE event of a content chunk, `sseEvent(chunkObject(meta, delta, null))` byte for byte, from a template of
 * that very event: per token only the content is JSON-escaped. Building and stringifying a chunk object per token
 * was a share of the gateway's CPU and garbage per streamed job (issue 26). The template is cut from the real event
 * at a marker, so it follows `chunkObject` if that changes; a meta that contains the marker falls back to the object.
 */
export function contentChunkEvent(meta: CompletionMeta, withRole: boolean): (content: string) => string {
  const marker = "\u0000content\u0000";
  const delta = withRole ? { role: "assistant" as const, content: marker } : { content: marker };
  const parts = sseEvent(chunkObject(meta, delta, null)).split(JSON.stringify(marker));
  if (parts.length !== 2) {
    return (content) => sseEvent(chunkObject(meta, withRole ? { role: "assistant", content } : { content }, null));
  }
  const [before, after] = parts as [string, string];
  return (content) => before + JSON.stringify(content) + after;
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
