import { describe, expect, it } from "vitest";
import {
  chunkObject,
  completionIdOf,
  contentChunkEvent,
  completionObject,
  usageChunkObject,
  usageOf,
} from "./completionObjects.js";
import { SSE_DONE, sseEvent } from "./sseFraming.js";

const meta = {
  id: completionIdOf("job_01JD0000000000000000000000"),
  created: 1_700_000_000,
  model: "qwen3-1.7b",
  systemFingerprint: "simulated",
};

describe("completion objects", () => {
  it("builds the id from chatcmpl- and the job id", () => {
    expect(meta.id).toBe("chatcmpl-job_01JD0000000000000000000000");
  });

  it("builds a chat.completion with the assistant message, finish reason and usage", () => {
    const completion = completionObject(meta, "Hi", "stop", usageOf(3, 1));
    expect(completion).toMatchObject({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      system_fingerprint: "simulated",
    });
  });

  it("writes a content chunk's event from its template byte for byte as the chunk object's", () => {
    const texts = [
      "Hi",
      "",
      ' "quoted" \\ back',
      "line\nbreak\t",
      "\u0000\u001f\u2028\u2029",
      "é中😀",
      "\ud800 lone",
      "</script>",
    ];
    for (const withRole of [true, false]) {
      const event = contentChunkEvent(meta, withRole);
      for (const content of texts) {
        const delta = withRole ? { role: "assistant" as const, content } : { content };
        expect(event(content)).toBe(sseEvent(chunkObject(meta, delta, null)));
      }
    }
    // A meta that contains the marker itself still gets the same bytes.
    const odd = { ...meta, model: "\u0000content\u0000" };
    expect(contentChunkEvent(odd, false)("x")).toBe(sseEvent(chunkObject(odd, { content: "x" }, null)));
  });

  it("builds chunks with a delta and a null finish reason until the last", () => {
    expect(chunkObject(meta, { role: "assistant", content: "Hi" }, null).choices[0]).toEqual({
      index: 0,
      delta: { role: "assistant", content: "Hi" },
      logprobs: null,
      finish_reason: null,
    });
    expect(chunkObject(meta, {}, "length").choices[0]).toMatchObject({ delta: {}, finish_reason: "length" });
  });

  it("puts the charge in usage: cost in credits where OpenRouter has it, the details in usage.service", () => {
    const charge = {
      job_id: "job_01JD0000000000000000000000",
      credits_charged: 8,
      usdg_value: 0.08,
      credits_remaining: 992,
      escrow_tx: `0x${"a".repeat(64)}`,
      settlement_tx: null,
      worker_address: `0x${"b".repeat(40)}`,
    };
    expect(usageOf(3, 1, charge)).toEqual({
      prompt_tokens: 3,
      completion_tokens: 1,
      total_tokens: 4,
      cost: 8,
      service: charge,
    });
    expect(usageOf(3, 1)).not.toHaveProperty("cost");
  });

  it("builds the usage chunk with no choices", () => {
    expect(usageChunkObject(meta, usageOf(1, 2))).toMatchObject({
      object: "chat.completion.chunk",
      choices: [],
      usage: { total_tokens: 3 },
    });
  });
});

describe("SSE framing", () => {
  it("frames an event as a data line followed by a blank line", () => {
    expect(sseEvent({ a: 1 })).toBe('data: {"a":1}\n\n');
  });

  it("ends the stream with data: [DONE]", () => {
    expect(SSE_DONE).toBe("data: [DONE]\n\n");
  });
});
