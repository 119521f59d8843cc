import { describe, expect, it } from "vitest";
import { ApiError } from "../errors/ApiError.js";
import { chatRequestSchema, parseChatRequest } from "./requestSchema.js";

const base = { model: "llama-3.1-8b-instruct", messages: [{ role: "user", content: "Hello" }] };

function refusal(body: unknown): ApiError {
  try {
    parseChatRequest(body, 1024);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("parseChatRequest", () => {
  it("accepts the minimal body with stream defaulting to false", () => {
    const request = parseChatRequest(base, 1024);
    expect(request).toMatchObject({ model: base.model, stream: false, includeUsage: false, maxTokens: undefined });
  });

  it("folds max_completion_tokens into maxTokens", () => {
    expect(parseChatRequest({ ...base, max_completion_tokens: 64 }, 1024).maxTokens).toBe(64);
  });

  it("turns a single stop string into a list", () => {
    expect(parseChatRequest({ ...base, stop: "END" }, 1024).stop).toEqual(["END"]);
  });

  it("reads stream_options.include_usage on a stream", () => {
    expect(
      parseChatRequest({ ...base, stream: true, stream_options: { include_usage: true } }, 1024).includeUsage,
    ).toBe(true);
  });

  it("accepts n = 1, logprobs false and response_format text", () => {
    expect(() =>
      parseChatRequest({ ...base, n: 1, logprobs: false, response_format: { type: "text" }, user: "u1" }, 1024),
    ).not.toThrow();
  });

  it("error: tools are refused naming the param", () => {
    const error = refusal({ ...base, tools: [{ type: "function", function: { name: "f" } }] });
    expect(error.code).toBe("invalid_request");
    expect(error.param).toBe("tools");
  });

  it("error: function_call is refused naming the param", () => {
    expect(refusal({ ...base, function_call: "auto" }).param).toBe("function_call");
  });

  it("error: array (image) content parts are refused at messages.N.content", () => {
    const error = refusal({
      model: base.model,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }],
    });
    expect(error.param).toBe("messages.0.content");
  });

  it("error: an unknown role is refused at messages.N.role", () => {
    expect(refusal({ model: base.model, messages: [{ role: "tool", content: "x" }] }).param).toBe("messages.0.role");
  });

  it("error: a missing model names model", () => {
    expect(refusal({ messages: base.messages }).param).toBe("model");
  });

  it("error: empty messages are refused", () => {
    expect(refusal({ model: base.model, messages: [] }).param).toBe("messages");
  });

  it("error: temperature above 2 is refused", () => {
    expect(refusal({ ...base, temperature: 2.5 }).param).toBe("temperature");
  });

  it("error: presence_penalty below -2 is refused", () => {
    expect(refusal({ ...base, presence_penalty: -3 }).param).toBe("presence_penalty");
  });

  it("error: top_p above 1 is refused", () => {
    expect(refusal({ ...base, top_p: 1.5 }).param).toBe("top_p");
  });

  it("error: max_tokens must be a positive integer", () => {
    expect(refusal({ ...base, max_tokens: 0 }).param).toBe("max_tokens");
    expect(refusal({ ...base, max_tokens: 1.5 }).param).toBe("max_tokens");
  });

  it("error: more than four stop sequences are refused", () => {
    expect(refusal({ ...base, stop: ["a", "b", "c", "d", "e"] }).param).toBe("stop");
  });

  it("error: n above 1 is refused", () => {
    expect(refusal({ ...base, n: 2 }).param).toBe("n");
  });

  it("error: logprobs true is refused", () => {
    expect(refusal({ ...base, logprobs: true }).param).toBe("logprobs");
  });

  it("error: response_format json_object is refused", () => {
    expect(refusal({ ...base, response_format: { type: "json_object" } }).param).toBe("response_format.type");
  });

  it("error: stream_options without stream is refused", () => {
    expect(refusal({ ...base, stream_options: { include_usage: true } }).param).toBe("stream_options");
  });

  it("error: a non-integer seed is refused", () => {
    expect(refusal({ ...base, seed: 1.5 }).param).toBe("seed");
  });

  it("error: too many messages are refused", () => {
    expect(() => parseChatRequest({ model: base.model, messages: [base.messages[0], base.messages[0]] }, 1)).toThrow(
      ApiError,
    );
  });
});

describe("parseChatRequest: null is the same as absent for every optional field (issue 11, item 5)", () => {
  const optionalFields = Object.keys(chatRequestSchema(1024).shape).filter(
    (field) => field !== "model" && field !== "messages",
  );

  it("covers the fields the schema declares", () => {
    expect(optionalFields).toEqual(expect.arrayContaining(["stream", "stream_options", "max_tokens", "stop", "seed"]));
  });

  it.each(optionalFields)("%s: null parses exactly like an absent field", (field) => {
    expect(parseChatRequest({ ...base, [field]: null }, 1024)).toEqual(parseChatRequest(base, 1024));
  });

  it("every optional field null at once", () => {
    const allNull = Object.fromEntries(optionalFields.map((field) => [field, null]));
    expect(parseChatRequest({ ...base, ...allNull }, 1024)).toEqual(parseChatRequest(base, 1024));
  });

  it("nested optional fields too: a message's name, stream_options.include_usage", () => {
    const named = { ...base, messages: [{ role: "user", content: "Hello", name: null }] };
    expect(parseChatRequest(named, 1024)).toEqual(parseChatRequest(base, 1024));
    const stream = { ...base, stream: true };
    expect(parseChatRequest({ ...stream, stream_options: { include_usage: null } }, 1024)).toEqual(
      parseChatRequest(stream, 1024),
    );
  });

  it("error: null is still refused where a value is required (content)", () => {
    expect(refusal({ ...base, messages: [{ role: "user", content: null }] }).param).toBe("messages.0.content");
  });
});
