import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors/ApiError.js";
import {
  CHAT_FRAMING,
  LONG_COUNTS_AT_ONCE,
  LONG_PROMPT_CHARS,
  countPromptTokens,
  type PromptMessage,
} from "./countPromptTokens.js";

const reference = (messages: PromptMessage[]) => encodeChat(messages, "gpt-4o").length;

describe("countPromptTokens", () => {
  it("pins the gpt-4o chat framing to gpt-tokenizer's encodeChat", () => {
    expect(reference([])).toBe(CHAT_FRAMING.primer);
    for (const role of ["system", "user", "assistant"] as const) {
      expect(reference([{ role, content: "" }])).toBe(CHAT_FRAMING.primer + CHAT_FRAMING.perMessage);
    }
  });

  it("counts a conversation exactly as the workers do (encodeChat, gpt-4o)", async () => {
    const messages: PromptMessage[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Summarise: 字".repeat(200) + "😀".repeat(300) },
      { role: "assistant", content: "Okay." },
      { role: "user", content: "and again, in English please — thanks!" },
    ];
    expect(await countPromptTokens(messages)).toEqual({ tokens: reference(messages), exceeded: false });
  });

  it("counts a prompt that fits but holds long runs without spaces exactly", async () => {
    const messages: PromptMessage[] = [{ role: "user", content: "字".repeat(6_000) + "😀".repeat(3_000) }];
    expect((await countPromptTokens(messages, 128_000)).tokens).toBe(reference(messages));
  });

  it("reports exceeded once the count reaches the limit, without counting the rest", async () => {
    const messages: PromptMessage[] = [{ role: "user", content: "😀字".repeat(300_000) }];
    const count = await countPromptTokens(messages, 32_768);
    expect(count.exceeded).toBe(true);
    expect(count.tokens).toBeGreaterThanOrEqual(32_768);
    expect(count.tokens).toBeLessThan(300_000);
  });

  it("lets the event loop run while it counts a long prompt", async () => {
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      await countPromptTokens([{ role: "user", content: "😀".repeat(150_000) + "字".repeat(150_000) }]);
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it("error: refuses reserved special-token text, naming the message", async () => {
    const messages: PromptMessage[] = [
      { role: "user", content: "fine" },
      { role: "user", content: "x <|endoftext|> y" },
    ];
    const error = await countPromptTokens(messages).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("invalid_request");
    expect((error as ApiError).param).toBe("messages.1.content");
  });
});

describe("countPromptTokens: long prompts take turns", () => {
  it(`answers every one of more than ${LONG_COUNTS_AT_ONCE} long prompts sent at once, exactly`, async () => {
    const content = "字".repeat(LONG_PROMPT_CHARS + 1);
    const expected = await countPromptTokens([{ role: "user", content }]);
    const results = await Promise.all(Array.from({ length: 5 }, () => countPromptTokens([{ role: "user", content }])));
    expect(results).toEqual(Array.from({ length: 5 }, () => expected));
  });
});
