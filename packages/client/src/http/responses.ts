import { z } from "zod";
import { components } from "./common.js";
import { completionUsageSchema } from "./completions.js";

/**
 * POST /v1/responses: the OpenAI Responses API, stateless and text only. The same job as a chat completion
 * (escrow, pricing, settlement, dispute); the request is translated into one (api/responses/) and the job's
 * tokens are written as Responses events. Shapes follow OpenAI's (the `openai` SDK's `Response`,
 * `ResponseStreamEvent`); fields the service does not offer are refused with `invalid_request` naming them.
 */

/** Top-level parameters accepted (every other one is refused with `invalid_request` naming it). */
export const RESPONSES_PARAMS = [
  "model",
  "input",
  "instructions",
  "max_output_tokens",
  "temperature",
  "top_p",
  "stream",
  "store",
  "text",
  "user",
] as const;

export const responseInputTextSchema = z.strictObject({ type: z.literal("input_text"), text: z.string() });

/** Text of an earlier answer sent back as context (an assistant message's `output_text`, annotations ignored). */
export const responseOutputTextPartSchema = z.object({ type: z.literal("output_text"), text: z.string() });

export const responseInputMessageSchema = z
  .strictObject({
    type: z.literal("message").nullish(),
    role: z.enum(["user", "assistant", "system", "developer"], {
      message: "role must be one of user, assistant, system, developer",
    }),
    content: z.union([
      z.string(),
      z
        .array(z.discriminatedUnion("type", [responseInputTextSchema, responseOutputTextPartSchema]))
        .min(1, "content must not be empty"),
    ]),
    /** Present when an earlier response's output item is sent back; ignored. */
    id: z.string().nullish(),
    status: z.enum(["in_progress", "completed", "incomplete"]).nullish(),
  })
  .meta({
    description:
      "A message: `content` is a string or a list of `input_text` parts (`output_text` parts for `assistant`). " +
      "`developer` is read as `system`. Images, files, audio and other item types are refused.",
  })
  .register(components, { id: "ResponseInputMessage" });

const maxOutputTokens = z.number().int().min(1).max(4_294_967_295);

/**
 * The request body. Every optional field takes `null` as "absent". The rules the schema cannot say (which
 * unsupported parameter, which content part) are checked by `parseResponsesRequest` (api/responses/).
 */
export const responseCreateRequestSchema = z
  .strictObject({
    model: z.string({ message: "model is required" }).min(1, "model is required"),
    input: z.union([
      z.string().min(1, "input must not be empty"),
      z.array(responseInputMessageSchema, { message: "input must be a string or a list of messages" }).min(1),
    ]),
    instructions: z.string().nullish().meta({ description: "Read as a system message before `input`." }),
    max_output_tokens: maxOutputTokens.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stream: z.boolean().nullish().meta({ default: false }),
    store: z
      .literal(false, { message: "responses are not stored: only store false is supported" })
      .nullish()
      .meta({ description: "Responses are never stored (stateless): only `false`." }),
    text: z
      .strictObject({
        format: z
          .strictObject({ type: z.literal("text", { message: "only text.format {type: 'text'} is supported" }) })
          .nullish(),
      })
      .nullish(),
    user: z.string().max(512).nullish(),
  })
  .meta({
    description:
      "OpenAI Responses API, stateless and text only. Tools, `previous_response_id`, `conversation`, " +
      "`background`, `reasoning`, `store: true`, structured output, image/file inputs and unknown parameters are " +
      "refused with `invalid_request` naming the parameter.",
  })
  .register(components, { id: "ResponseCreateRequest" });
export type ResponseCreateRequest = z.infer<typeof responseCreateRequestSchema>;

/** `usage` of a response: OpenAI's token counts plus the charge, as chat completions carry it. */
export const responseUsageSchema = z
  .object({
    input_tokens: z.number().int().min(0),
    input_tokens_details: z.object({ cached_tokens: z.number().int().min(0) }),
    output_tokens: z.number().int().min(0),
    output_tokens_details: z.object({ reasoning_tokens: z.number().int().min(0) }),
    total_tokens: z.number().int().min(0),
    cost: completionUsageSchema.shape.cost,
    service: completionUsageSchema.shape.service,
  })
  .register(components, { id: "ResponseUsage" });
export type ResponseUsage = z.infer<typeof responseUsageSchema>;

const responseId = z
  .string()
  .regex(/^resp_job_/)
  .meta({ description: "`resp_` and the job id." });
const messageId = z
  .string()
  .regex(/^msg_job_/)
  .meta({ description: "`msg_` and the job id." });
const itemStatus = z.enum(["in_progress", "completed", "incomplete"]);

export const responseOutputTextSchema = z.object({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(z.never()),
  logprobs: z.array(z.never()),
});

export const responseOutputMessageSchema = z
  .object({
    type: z.literal("message"),
    id: messageId,
    status: itemStatus,
    role: z.literal("assistant"),
    content: z.array(responseOutputTextSchema),
  })
  .register(components, { id: "ResponseOutputMessage" });

/** The spec's error object (code, message, type, param, docs, details): OpenAI's `{code, message}` and more. */
const responseErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  type: z.string(),
  param: z.string().nullable(),
  docs: z.string(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});

export const responseObjectSchema = z
  .object({
    id: responseId,
    object: z.literal("response"),
    created_at: z.number().int().meta({ description: "Unix seconds." }),
    status: z.enum(["in_progress", "completed", "incomplete", "failed"]),
    error: responseErrorSchema.nullable(),
    incomplete_details: z.object({ reason: z.literal("max_output_tokens") }).nullable(),
    model: z.string(),
    output: z.array(responseOutputMessageSchema),
    usage: responseUsageSchema.nullable().meta({ description: "With the charge; null until the job is complete." }),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    // Fixed: what a stateless, text-only service answers for OpenAI's other fields.
    store: z.literal(false),
    background: z.literal(false),
    previous_response_id: z.null(),
    tools: z.array(z.never()),
    tool_choice: z.literal("none"),
    parallel_tool_calls: z.literal(false),
    text: z.object({ format: z.object({ type: z.literal("text") }) }),
    truncation: z.literal("disabled"),
    metadata: z.object({}),
    user: z.string().nullable(),
  })
  .register(components, { id: "Response" });
export type ResponseObject = z.infer<typeof responseObjectSchema>;

const seq = { sequence_number: z.number().int().min(0) };
const position = { item_id: messageId, output_index: z.literal(0), content_index: z.literal(0) };

/** One event of a stream (`event: <type>` then `data: <json>`), in the order the union lists them. */
export const responseStreamEventSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("response.created"), response: responseObjectSchema, ...seq }),
    z.object({ type: z.literal("response.in_progress"), response: responseObjectSchema, ...seq }),
    z.object({
      type: z.literal("response.output_item.added"),
      output_index: z.literal(0),
      item: responseOutputMessageSchema,
      ...seq,
    }),
    z.object({ type: z.literal("response.content_part.added"), ...position, part: responseOutputTextSchema, ...seq }),
    z.object({
      type: z.literal("response.output_text.delta"),
      ...position,
      delta: z.string(),
      logprobs: z.array(z.never()),
      ...seq,
    }),
    z.object({
      type: z.literal("response.output_text.done"),
      ...position,
      text: z.string(),
      logprobs: z.array(z.never()),
      ...seq,
    }),
    z.object({ type: z.literal("response.content_part.done"), ...position, part: responseOutputTextSchema, ...seq }),
    z.object({
      type: z.literal("response.output_item.done"),
      output_index: z.literal(0),
      item: responseOutputMessageSchema,
      ...seq,
    }),
    z.object({ type: z.literal("response.completed"), response: responseObjectSchema, ...seq }),
    z.object({ type: z.literal("response.incomplete"), response: responseObjectSchema, ...seq }),
    z.object({ type: z.literal("response.failed"), response: responseObjectSchema, ...seq }),
  ])
  .meta({
    description:
      "One event of a `stream: true` response: `response.created`, `response.in_progress`, " +
      "`response.output_item.added`, `response.content_part.added`, `response.output_text.delta`…, " +
      "`response.output_text.done`, `response.content_part.done`, `response.output_item.done`, then " +
      "`response.completed` (`response.incomplete` when `max_output_tokens` cut the answer) whose `usage` carries " +
      "the charge. An error after the stream started ends it with `response.failed`, its `response.error` the " +
      "spec's error object. No `[DONE]`; the settlement transaction follows as the trailer `x-service-settlement-tx`.",
  })
  .register(components, { id: "ResponseStreamEvent" });
export type ResponseStreamEvent = z.infer<typeof responseStreamEventSchema>;
