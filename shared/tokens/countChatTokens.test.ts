import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  CHAT_FRAMING,
  LONG_COUNTS_AT_ONCE,
  LONG_PROMPT_CHARS,
  ReservedTokenTextError,
  countChatTokens,
  warmUpCounting,
  type ChatText,
} from "./countChatTokens.js";

/** What the workers signed before they shared this counter: gpt-tokenizer's encodeChat with gpt-4o framing. */
const reference = (messages: ChatText[]) => encodeChat(messages, "gpt-4o").length;

describe("countChatTokens", () => {
  it("pins the gpt-4o chat framing to gpt-tokenizer's encodeChat", () => {
    expect(reference([])).toBe(CHAT_FRAMING.primer);
    for (const role of ["system", "user", "assistant"] as const) {
      expect(reference([{ role, content: "" }])).toBe(CHAT_FRAMING.primer + CHAT_FRAMING.perMessage);
    }
  });

  it("counts a conversation exactly as gpt-tokenizer's encodeChat (gpt-4o) does", async () => {
    const messages: ChatText[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Summarise: 字".repeat(200) + "😀".repeat(300) },
      { role: "assistant", content: "Okay." },
      { role: "user", content: "and again, in English please — thanks!" },
    ];
    expect(await countChatTokens(messages)).toEqual({ tokens: reference(messages), exceeded: false });
  });

  it("counts a prompt that fits but holds long runs without spaces exactly", async () => {
    const messages: ChatText[] = [{ role: "user", content: "字".repeat(6_000) + "😀".repeat(3_000) }];
    expect((await countChatTokens(messages, 128_000)).tokens).toBe(reference(messages));
  });

  it("reports exceeded once the count reaches the limit, without counting the rest", async () => {
    const messages: ChatText[] = [{ role: "user", content: "😀字".repeat(300_000) }];
    const count = await countChatTokens(messages, 32_768);
    expect(count.exceeded).toBe(true);
    expect(count.tokens).toBeGreaterThanOrEqual(32_768);
    expect(count.tokens).toBeLessThan(300_000);
  });

  it("lets the event loop run while it counts a long prompt", async () => {
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      await countChatTokens([{ role: "user", content: "😀".repeat(150_000) + "字".repeat(150_000) }]);
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it("error: refuses reserved special-token text, naming the message", async () => {
    const messages: ChatText[] = [
      { role: "user", content: "fine" },
      { role: "user", content: "x <|endoftext|> y" },
    ];
    const error = await countChatTokens(messages).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReservedTokenTextError);
    expect(error).toMatchObject({ messageIndex: 1, text: "<|endoftext|>" });
    // gpt-tokenizer refuses the same text, so no count is lost by refusing it.
    expect(() => reference(messages)).toThrow(/<\|endoftext\|>/);
  });
});

describe("warmUpCounting (start-up, before the process listens)", () => {
  it("leaves every count exact: the pooled scratch and memo it fills are reused correctly afterwards", async () => {
    await warmUpCounting();
    const messages: ChatText[] = [
      { role: "user", content: "字".repeat(5_000) + "😀".repeat(4_000) + "ab".repeat(3_000) },
    ];
    expect((await countChatTokens(messages)).tokens).toBe(reference(messages));
  });
});

describe("countChatTokens: long prompts take turns", () => {
  it(`answers every one of more than ${LONG_COUNTS_AT_ONCE} long prompts sent at once, exactly`, async () => {
    const content = "字".repeat(LONG_PROMPT_CHARS + 1);
    const expected = await countChatTokens([{ role: "user", content }]);
    const results = await Promise.all(Array.from({ length: 5 }, () => countChatTokens([{ role: "user", content }])));
    expect(results).toEqual(Array.from({ length: 5 }, () => expected));
  });
});
