/** Builders of the Responses objects (packages/client/src/http/responses.ts): the response, its message, usage. */

import type { ResponseObject, ResponseStreamEvent, ResponseUsage } from "@credit-metered/client/http";
import type { FinishReason, Usage } from "../completions/completionObjects.js";
import type { ErrorBody } from "../errors/ApiError.js";
import type { ResponsesRequest } from "./parseResponsesRequest.js";

export type ResponseMessage = ResponseObject["output"][number];
export type ResponseStatus = ResponseObject["status"];

/** The response as the job knows it: ids from the job id, like `chatcmpl-<job id>`. */
export interface ResponseMeta {
  /** `resp_<job id>` */
  id: string;
  /** `msg_<job id>`: the one output message. */
  messageId: string;
  createdAt: number;
  model: string;
  /** What the response object echoes of the request. */
  request: Omit<ResponsesRequest, "job" | "sources">;
}

export function responseIdOf(jobId: string): string {
  return `resp_${jobId}`;
}

export function messageIdOf(jobId: string): string {
  return `msg_${jobId}`;
}

/** A chat completion's `usage` (tokens and charge) under the Responses names; the charge rides along as is. */
export function responseUsageOf(usage: Usage): ResponseUsage | null {
  if (!usage.service || usage.cost === undefined) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
    cost: usage.cost,
    service: usage.service,
  };
}

export function outputText(text: string) {
  return { type: "output_text" as const, text, annotations: [], logprobs: [] };
}

export function outputMessage(meta: ResponseMeta, status: ResponseMessage["status"], text?: string): ResponseMessage {
  return {
    type: "message",
    id: meta.messageId,
    status,
    role: "assistant",
    content: text === undefined ? [] : [outputText(text)],
  };
}

/** `status` of a finished answer: `incomplete` when `max_output_tokens` cut it. */
export function statusOf(finishReason: FinishReason): "completed" | "incomplete" {
  return finishReason === "length" ? "incomplete" : "completed";
}

export function responseObject(
  meta: ResponseMeta,
  state: {
    status: ResponseStatus;
    output: ResponseMessage[];
    usage: ResponseUsage | null;
    error?: ErrorBody["error"];
  },
): ResponseObject {
  const { request } = meta;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    model: meta.model,
    output: state.output,
    usage: state.usage,
    instructions: request.instructions,
    max_output_tokens: request.maxOutputTokens,
    temperature: request.temperature,
    top_p: request.topP,
    store: false,
    background: false,
    previous_response_id: null,
    tools: [],
    tool_choice: "none",
    parallel_tool_calls: false,
    text: { format: { type: "text" } },
    truncation: "disabled",
    metadata: {},
    user: request.user,
  };
}

/** An event before the writer numbers it (`sequence_number`). */
export type UnnumberedEvent = ResponseStreamEvent extends infer Event
  ? Event extends ResponseStreamEvent
    ? Omit<Event, "sequence_number">
    : never
  : never;
type EventOf<Type extends ResponseStreamEvent["type"]> = Extract<UnnumberedEvent, { type: Type }>;

/** The events that open a stream, before the first delta. */
export function openingEvents(meta: ResponseMeta): UnnumberedEvent[] {
  const inProgress = responseObject(meta, { status: "in_progress", output: [], usage: null });
  return [
    { type: "response.created", response: inProgress },
    { type: "response.in_progress", response: inProgress },
    { type: "response.output_item.added", output_index: 0, item: outputMessage(meta, "in_progress") },
    {
      type: "response.content_part.added",
      item_id: meta.messageId,
      output_index: 0,
      content_index: 0,
      part: outputText(""),
    },
  ];
}

export function deltaEvent(meta: ResponseMeta, delta: string): EventOf<"response.output_text.delta"> {
  return {
    type: "response.output_text.delta",
    item_id: meta.messageId,
    output_index: 0,
    content_index: 0,
    delta,
    logprobs: [],
  };
}

/** The events that close a stream: the text, its part, its message, then the whole response with its charge. */
export function closingEvents(meta: ResponseMeta, final: ResponseObject): UnnumberedEvent[] {
  const message = final.output[0] ?? outputMessage(meta, "completed", "");
  const text = message.content[0]?.text ?? "";
  const position = { item_id: meta.messageId, output_index: 0 as const, content_index: 0 as const };
  return [
    { type: "response.output_text.done", ...position, text, logprobs: [] },
    { type: "response.content_part.done", ...position, part: outputText(text) },
    { type: "response.output_item.done", output_index: 0, item: message },
    {
      type: final.status === "incomplete" ? "response.incomplete" : "response.completed",
      response: final,
    },
  ];
}
