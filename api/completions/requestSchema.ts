import { chatRequestSchema } from "@credit-metered/client/http";
import { ApiError } from "../errors/ApiError.js";
import { parseOrThrow } from "../http/validate.js";

/** The body's schema is the HTTP contract's (@credit-metered/client/http, packages/client/src/http/completions.ts); this module adds the rules around it. */
export { chatRequestSchema, type ChatRequest } from "@credit-metered/client/http";

/**
 * Request parameters the service does not offer (spec, "What the service does" rule 8). Each is refused with
 * `invalid_request` naming it, instead of being silently ignored, so a client never believes a tool call ran.
 */
const UNSUPPORTED_PARAMS = [
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "functions",
  "function_call",
  "logit_bias",
  "top_logprobs",
  "audio",
  "modalities",
  "prediction",
  "web_search_options",
] as const;

// Building the zod schema costs more CPU than parsing a request with it (profiled under load): build it once per
// message limit (the limit is a setting, so in practice once).
const schemaByLimit = new Map<number, ReturnType<typeof chatRequestSchema>>();
function cachedChatRequestSchema(maxMessages: number): ReturnType<typeof chatRequestSchema> {
  let schema = schemaByLimit.get(maxMessages);
  if (!schema) {
    schema = chatRequestSchema(maxMessages);
    schemaByLimit.set(maxMessages, schema);
  }
  return schema;
}

/** The request as the gateway uses it: validated, aliases folded, unsupported features refused. */
export interface ChatCompletionRequest {
  model: string;
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  stream: boolean;
  includeUsage: boolean;
  /** As the client sent it (undefined when absent); the effective value is computed against the context. */
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  frequencyPenalty: number | undefined;
  presencePenalty: number | undefined;
  stop: string[] | undefined;
  seed: number | undefined;
}

/** Validates a chat completion body (spec, POST /v1/chat/completions); throws `invalid_request` naming `param`. */
export function parseChatRequest(body: unknown, maxMessages: number): ChatCompletionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("invalid_request", { message: "The body must be a JSON object.", param: null });
  }
  const record = body as Record<string, unknown>;
  for (const param of UNSUPPORTED_PARAMS) {
    const value = record[param];
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
      throw new ApiError("invalid_request", {
        message: `'${param}' is not supported: tool/function calling, logprobs and multimodal features are not offered.`,
        param,
      });
    }
  }
  const parsed = parseOrThrow(cachedChatRequestSchema(maxMessages), body);
  if (parsed.stream_options && !parsed.stream) {
    throw new ApiError("invalid_request", {
      message: "'stream_options' is only allowed when 'stream' is true.",
      param: "stream_options",
    });
  }
  if (
    parsed.max_tokens != null &&
    parsed.max_completion_tokens != null &&
    parsed.max_tokens !== parsed.max_completion_tokens
  ) {
    throw new ApiError("invalid_request", {
      message: "'max_tokens' and 'max_completion_tokens' disagree; send one of them.",
      param: "max_completion_tokens",
    });
  }
  return {
    model: parsed.model,
    messages: parsed.messages.map(({ role, content }) => ({ role, content })),
    stream: parsed.stream ?? false,
    includeUsage: parsed.stream_options?.include_usage === true,
    maxTokens: parsed.max_tokens ?? parsed.max_completion_tokens ?? undefined,
    temperature: parsed.temperature ?? undefined,
    topP: parsed.top_p ?? undefined,
    frequencyPenalty: parsed.frequency_penalty ?? undefined,
    presencePenalty: parsed.presence_penalty ?? undefined,
    stop: parsed.stop == null ? undefined : typeof parsed.stop === "string" ? [parsed.stop] : parsed.stop,
    seed: parsed.seed ?? undefined,
  };
}
