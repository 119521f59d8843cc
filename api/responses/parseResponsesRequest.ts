import { RESPONSES_PARAMS, responseCreateRequestSchema } from "@credit-metered/client/http";
import type { ChatCompletionRequest } from "../completions/requestSchema.js";
import { ApiError } from "../errors/ApiError.js";
import { parseOrThrow } from "../http/validate.js";

/**
 * Responses parameters the service does not offer (spec, "What the service does" rule 8, and no stored state):
 * refused naming the parameter, with the reason, so a client never believes a tool ran or a response was stored.
 */
const NOT_OFFERED: Record<string, string> = {
  tools: "tool/function calling is not offered",
  tool_choice: "tool/function calling is not offered",
  parallel_tool_calls: "tool/function calling is not offered",
  max_tool_calls: "tool/function calling is not offered",
  previous_response_id: "responses are not stored: send the whole conversation in 'input'",
  conversation: "conversations are not stored: send the whole conversation in 'input'",
  background: "background responses are not offered",
  reasoning: "reasoning options are not offered",
  include: "extra output data ('include') is not offered",
  prompt: "stored prompts are not offered",
  top_logprobs: "logprobs are not offered",
  stream_options: "stream options are not offered",
  truncation: "truncation is not offered: a prompt over the context window is refused",
  service_tier: "service tiers are not offered: the model's tier sets the price",
  metadata: "responses are not stored, so they carry no metadata",
  prompt_cache_key: "prompt caching options are not offered",
  prompt_cache_retention: "prompt caching options are not offered",
  safety_identifier: "safety identifiers are not offered",
};

/** Content parts and input items that are not text (images, files, audio, tool results, references). */
const TEXT_PARTS = new Set(["input_text", "output_text"]);

/** A Responses request as the gateway runs it: the internal job plus what the response object echoes. */
export interface ResponsesRequest {
  /** The chat completion job the request is (priced, escrowed, routed and settled as one). */
  job: ChatCompletionRequest;
  instructions: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  user: string | null;
  /** Where each job message came from in the body (`instructions`, `input`, `input.2`): for error params. */
  sources: string[];
}

/**
 * Validates a Responses body and translates it into a chat completion job: `instructions` becomes the first
 * system message, a string `input` one user message, each input message one message (`developer` read as
 * `system`, text parts joined by newlines). Throws `invalid_request` naming the parameter.
 */
export function parseResponsesRequest(body: unknown, maxMessages: number): ResponsesRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("invalid_request", { message: "The body must be a JSON object.", param: null });
  }
  const record = body as Record<string, unknown>;
  for (const [param, value] of Object.entries(record)) {
    const reason = NOT_OFFERED[param];
    if (reason !== undefined) {
      if (value === null || (Array.isArray(value) && value.length === 0)) continue;
      throw new ApiError("invalid_request", { message: `'${param}' is not supported: ${reason}.`, param });
    }
    if (!(RESPONSES_PARAMS as readonly string[]).includes(param))
      throw new ApiError("invalid_request", { message: `Unknown parameter '${param}'.`, param });
  }
  refuseNonTextInput(record.input);
  // A parameter not offered but sent empty (null, []) means "none": dropped before the strict schema.
  const known = Object.fromEntries(Object.entries(record).filter(([name]) => NOT_OFFERED[name] === undefined));
  const parsed = parseOrThrow(responseCreateRequestSchema, known);

  const messages: ChatCompletionRequest["messages"] = [];
  const sources: string[] = [];
  if (parsed.instructions != null) {
    messages.push({ role: "system", content: parsed.instructions });
    sources.push("instructions");
  }
  if (typeof parsed.input === "string") {
    messages.push({ role: "user", content: parsed.input });
    sources.push("input");
  } else {
    parsed.input.forEach((message, index) => {
      const role = message.role === "developer" ? "system" : message.role;
      if (typeof message.content === "string") {
        messages.push({ role, content: message.content });
      } else {
        message.content.forEach((part, partIndex) => {
          if (part.type === "output_text" && role !== "assistant")
            throw new ApiError("invalid_request", {
              message: "'output_text' parts belong to assistant messages; send user text as 'input_text'.",
              param: `input.${index}.content.${partIndex}.type`,
            });
        });
        messages.push({ role, content: message.content.map((part) => part.text).join("\n") });
      }
      sources.push(`input.${index}`);
    });
  }
  if (messages.length > maxMessages) {
    throw new ApiError("invalid_request", { message: `At most ${maxMessages} messages.`, param: "input" });
  }
  return {
    job: {
      model: parsed.model,
      messages,
      stream: parsed.stream ?? false,
      includeUsage: false,
      maxTokens: parsed.max_output_tokens ?? undefined,
      temperature: parsed.temperature ?? undefined,
      topP: parsed.top_p ?? undefined,
      frequencyPenalty: undefined,
      presencePenalty: undefined,
      stop: undefined,
      seed: undefined,
    },
    instructions: parsed.instructions ?? null,
    maxOutputTokens: parsed.max_output_tokens ?? null,
    temperature: parsed.temperature ?? null,
    topP: parsed.top_p ?? null,
    user: parsed.user ?? null,
    sources,
  };
}

/** Images, files, audio and non-message items are refused by name before the schema's generic message. */
function refuseNonTextInput(input: unknown): void {
  if (!Array.isArray(input)) return;
  input.forEach((item: unknown, index) => {
    if (typeof item !== "object" || item === null) return;
    const { type, content } = item as { type?: unknown; content?: unknown };
    if (type !== undefined && type !== null && type !== "message") {
      throw new ApiError("invalid_request", {
        message: `Input items of type '${String(type)}' are not supported: only messages with text are offered.`,
        param: `input.${index}`,
      });
    }
    if (!Array.isArray(content)) return;
    content.forEach((part: unknown, partIndex) => {
      const partType = typeof part === "object" && part !== null ? (part as { type?: unknown }).type : undefined;
      if (typeof partType === "string" && !TEXT_PARTS.has(partType)) {
        throw new ApiError("invalid_request", {
          message: `Content parts of type '${partType}' are not supported: image, file and audio inputs are not offered.`,
          param: `input.${index}.content.${partIndex}`,
        });
      }
    });
  });
}

/**
 * An error about the internal job renamed after the request's own fields: `messages.2.content` is the message
 * that came from `input.1` (or `instructions`), `messages` is `input`.
 */
export function responsesErrorOf(request: ResponsesRequest, error: ApiError): ApiError {
  const match = error.param === null ? null : /^messages(?:\.(\d+))?(\..*)?$/.exec(error.param);
  if (!match) return error;
  const source = match[1] === undefined ? "input" : (request.sources[Number(match[1])] ?? "input");
  const param = source === "instructions" || source === "input" ? source : `${source}${match[2] ?? ""}`;
  return new ApiError(error.code, {
    message: error.message.replace(/\bThe messages have\b/, "The input has").replace(/\bmessages\b/g, "input"),
    param,
    ...(error.details ? { details: error.details } : {}),
    headers: error.headers,
  });
}
