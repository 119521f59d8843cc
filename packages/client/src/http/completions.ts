import { z } from "zod";
import { addressSchema, components, jobIdSchema, txHashSchema, usageSchema } from "./common.js";

/** POST /v1/chat/completions: the request body and the answers (whole, and each event of a stream). */

export const chatMessageSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"], { message: "role must be one of system, user, assistant" }),
    content: z.string({ message: "content must be a string (array/image content parts are not supported)" }),
    name: z.string().max(256).nullish(),
  })
  .register(components, { id: "ChatMessage" });

const maxTokens = z.number().int().min(1).max(4_294_967_295);

/**
 * The request body as documented (every bound but the message count, a setting: `chatRequestSchema`). Every
 * optional field takes `null` as "absent" (as OpenAI's API does), `stream` included. Unsupported parameters and the
 * rules between fields are checked by `parseChatRequest` (api/completions/requestSchema.ts).
 */
export const chatCompletionRequestSchema = z
  .object({
    model: z.string({ message: "model is required" }).min(1, "model is required"),
    messages: z
      .array(chatMessageSchema, { message: "messages must be an array of {role, content}" })
      .min(1, "messages must not be empty"),
    stream: z.boolean().nullish().meta({ default: false }),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
    max_tokens: maxTokens.nullish(),
    /** The newer OpenAI name for max_tokens; accepted as an alias. */
    max_completion_tokens: maxTokens.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4, "at most 4 stop sequences")]).nullish(),
    seed: z.number().int().nullish(),
    user: z.string().max(512).nullish(),
    n: z.literal(1, { message: "only n = 1 is supported" }).nullish(),
    logprobs: z.literal(false, { message: "logprobs are not supported" }).nullish(),
    response_format: z
      .object({ type: z.literal("text", { message: "only response_format {type: 'text'} is supported" }) })
      .nullish(),
  })
  .meta({
    description:
      "OpenAI-compatible. Tools, function calls, logit_bias, audio and other unsupported parameters are refused " +
      "with `invalid_request` naming the parameter.",
  })
  .register(components, { id: "ChatCompletionRequest" });

/** The request body with the gateway's message limit (`maxMessages`, a setting). */
export function chatRequestSchema(maxMessages: number) {
  return chatCompletionRequestSchema.extend({
    messages: chatCompletionRequestSchema.shape.messages.max(maxMessages, `at most ${maxMessages} messages`),
  });
}
export type ChatRequest = z.infer<ReturnType<typeof chatRequestSchema>>;

/** `usage` of a completion: the token counts plus the charge (api/README.md "The charge in the response"). */
export const completionUsageSchema = usageSchema
  .extend({
    cost: z.number().int().min(0).meta({
      description: "Credits charged for this request (where OpenRouter puts the cost; here in credits).",
    }),
    service: z
      .strictObject({
        job_id: jobIdSchema,
        credits_charged: z.number().int().min(0).meta({ description: "Equal to `cost`." }),
        usdg_value: z.number().min(0).meta({ description: "`credits_charged` / 100." }),
        credits_remaining: z.number().int().min(0).meta({ description: "The wallet's balance after the charge." }),
        escrow_tx: txHashSchema,
        settlement_tx: txHashSchema.nullable().meta({
          description:
            "The settlement transaction when it was sent before this object was written (always on a whole " +
            "completion unless the chain is slow; on a stream only when already known, otherwise in the " +
            "`x-service-settlement-tx` trailer and the job resource).",
        }),
        worker_address: addressSchema,
      })
      .meta({ description: "The charge and its transactions." }),
  })
  .register(components, { id: "CompletionUsage" });
export type CompletionUsage = z.infer<typeof completionUsageSchema>;

const completionId = z.string().regex(/^chatcmpl-job_/);
const finishReason = z.enum(["stop", "length"]);

export const chatCompletionSchema = z
  .object({
    id: completionId,
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    system_fingerprint: z.string().optional().meta({ description: "The worker's backend kind." }),
    choices: z
      .array(
        z.object({
          index: z.number().int(),
          message: z.object({ role: z.literal("assistant"), content: z.string() }),
          logprobs: z.null().optional(),
          finish_reason: finishReason,
        }),
      )
      .min(1),
    usage: completionUsageSchema,
  })
  .register(components, { id: "ChatCompletion" });
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z
  .object({
    id: completionId,
    object: z.literal("chat.completion.chunk"),
    created: z.number().int(),
    model: z.string(),
    system_fingerprint: z.string().optional(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.strictObject({ role: z.literal("assistant").optional(), content: z.string().optional() }),
        logprobs: z.null().optional(),
        finish_reason: finishReason.nullable(),
      }),
    ),
    usage: completionUsageSchema.optional(),
  })
  .meta({
    description:
      "One `data:` event of a stream. The last content chunk has an empty `delta` and a `finish_reason`; with " +
      "`stream_options.include_usage` a final chunk with no choices carries `usage`. An error after the stream " +
      "started arrives as one `data:` event holding an Error body.",
  })
  .register(components, { id: "ChatCompletionChunk" });
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
