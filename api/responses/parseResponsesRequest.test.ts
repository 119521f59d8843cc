import { describe, expect, it } from "vitest";
import { ApiError } from "../errors/ApiError.js";
import { parseResponsesRequest, responsesErrorOf } from "./parseResponsesRequest.js";

const MODEL = "llama-3.1-8b-instruct";

function refusal(body: unknown): ApiError {
  try {
    parseResponsesRequest(body, 1024);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("parseResponsesRequest", () => {
  it("reads a string input as one user message, not streamed", () => {
    const request = parseResponsesRequest({ model: MODEL, input: "Hello" }, 1024);
    expect(request.job).toMatchObject({
      model: MODEL,
      messages: [{ role: "user", content: "Hello" }],
      stream: false,
      maxTokens: undefined,
    });
  });

  it("puts instructions first as a system message", () => {
    const request = parseResponsesRequest({ model: MODEL, input: "Hi", instructions: "Be brief." }, 1024);
    expect(request.job.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
    expect(request.sources).toEqual(["instructions", "input"]);
  });

  it("reads messages with string or input_text content, developer as system, parts joined by newlines", () => {
    const request = parseResponsesRequest(
      {
        model: MODEL,
        input: [
          { role: "developer", content: "Rules." },
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "a" },
              { type: "input_text", text: "b" },
            ],
          },
          {
            role: "assistant",
            content: [{ type: "output_text", text: "c", annotations: [] }],
            id: "msg_1",
            status: "completed",
          },
        ],
      },
      1024,
    );
    expect(request.job.messages).toEqual([
      { role: "system", content: "Rules." },
      { role: "user", content: "a\nb" },
      { role: "assistant", content: "c" },
    ]);
  });

  it("maps max_output_tokens, temperature and top_p onto the job", () => {
    const request = parseResponsesRequest(
      { model: MODEL, input: "x", max_output_tokens: 32, temperature: 0.5, top_p: 0.9, stream: true },
      1024,
    );
    expect(request.job).toMatchObject({ maxTokens: 32, temperature: 0.5, topP: 0.9, stream: true });
  });

  it("accepts store false, text format text, user and nulls as absent", () => {
    expect(() =>
      parseResponsesRequest(
        {
          model: MODEL,
          input: "x",
          store: false,
          text: { format: { type: "text" } },
          user: "u",
          tools: null,
          include: [],
        },
        1024,
      ),
    ).not.toThrow();
  });

  it.each([
    ["tools", [{ type: "function", name: "f" }]],
    ["tool_choice", "auto"],
    ["previous_response_id", "resp_1"],
    ["conversation", "conv_1"],
    ["background", true],
    ["reasoning", { effort: "low" }],
    ["include", ["message.output_text.logprobs"]],
    ["metadata", { a: "b" }],
    ["frequency_penalty", 1],
  ])("error: refuses %s naming it", (param, value) => {
    const error = refusal({ model: MODEL, input: "x", [param]: value });
    expect(error.code).toBe("invalid_request");
    expect(error.param).toBe(param);
  });

  it("error: refuses store true naming store", () => {
    expect(refusal({ model: MODEL, input: "x", store: true }).param).toBe("store");
  });

  it("error: refuses a json_schema text format naming text.format.type", () => {
    const error = refusal({
      model: MODEL,
      input: "x",
      text: { format: { type: "json_schema", name: "n", schema: {} } },
    });
    expect(error.param).toMatch(/^text\.format/);
  });

  it("error: refuses an image part naming its position", () => {
    const error = refusal({
      model: MODEL,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "see" },
            { type: "input_image", image_url: "x" },
          ],
        },
      ],
    });
    expect(error.param).toBe("input.0.content.1");
  });

  it("error: refuses a non-message item naming it", () => {
    const error = refusal({ model: MODEL, input: [{ type: "function_call_output", call_id: "c", output: "{}" }] });
    expect(error.param).toBe("input.0");
  });

  it("error: refuses output_text in a user message", () => {
    const error = refusal({ model: MODEL, input: [{ role: "user", content: [{ type: "output_text", text: "x" }] }] });
    expect(error.param).toBe("input.0.content.0.type");
  });

  it("error: refuses a missing input naming input", () => {
    expect(refusal({ model: MODEL }).param).toBe("input");
  });

  it("error: refuses more messages than the limit naming input", () => {
    try {
      parseResponsesRequest({ model: MODEL, input: [{ role: "user", content: "a" }], instructions: "b" }, 1);
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as ApiError).param).toBe("input");
    }
  });
});

describe("responsesErrorOf", () => {
  const request = parseResponsesRequest(
    {
      model: MODEL,
      instructions: "i",
      input: [
        { role: "user", content: "a" },
        { role: "user", content: "b" },
      ],
    },
    1024,
  );

  it("names the input message a job message came from", () => {
    const error = responsesErrorOf(request, new ApiError("invalid_request", { param: "messages.2.content" }));
    expect(error.param).toBe("input.1.content");
  });

  it("names instructions for the first job message", () => {
    expect(responsesErrorOf(request, new ApiError("invalid_request", { param: "messages.0.content" })).param).toBe(
      "instructions",
    );
  });

  it("names input for the whole conversation (context length)", () => {
    const error = responsesErrorOf(
      request,
      new ApiError("context_length_exceeded", { param: "messages", message: "The messages have 9 tokens" }),
    );
    expect(error.param).toBe("input");
    expect(error.message).toBe("The input has 9 tokens");
  });
});
