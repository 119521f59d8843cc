import fc from "fast-check";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { countTextTokens, countTokensOf, specialTokenIn, startTextCount } from "./bytePairCount.js";

/** What the workers counted with before this counter (gpt-tokenizer), with special-token text treated as text. */
const reference = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;

/** Text built from the character classes the pre-tokenizer separates, plus the awkward cases. */
const fragment = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("the ", "  ", "\n", "\r\n", "'s", "123456", "字", "😀", "👩‍👩‍👧‍👦", "\uFEFF", "\uD800", "é", "\u0301"),
  fc.string({ unit: fc.constantFrom("字", "漢", "😀", "🎉", "a", "Z", "1", "-", " "), maxLength: 40 }),
);
const text = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(""));

describe("bytePairCount: exact o200k_base counts in O(n log n)", () => {
  it("counts every text exactly as gpt-tokenizer does (the reference o200k_base tokenizer)", () => {
    fc.assert(
      fc.property(text, (value) => countTokensOf(value) === reference(value)),
      { numRuns: 3_000 },
    );
  });

  it("counts long runs without spaces exactly (CJK, emoji, letters, spaces, digits)", () => {
    for (const run of ["字".repeat(3_000), "😀".repeat(2_000), "a".repeat(4_000), " ".repeat(3_000), "7".repeat(999)]) {
      expect(countTokensOf(run)).toBe(reference(run));
    }
  });

  it("reproduces gpt-tokenizer's byte-order-mark lookup (a BOM before CJK is three tokens there)", () => {
    expect(countTokensOf("\uFEFF公")).toBe(reference("\uFEFF公"));
  });

  it("resumes where a slice stopped and reaches the same count", () => {
    const value = "字😀".repeat(5_000) + "😀".repeat(5_000) + " words and 123 ".repeat(500);
    const state = startTextCount(value);
    let slices = 0;
    let calls = 0;
    // A slice ends at every clock check: the count is spread over many resumptions.
    while (!state.done) {
      countTextTokens(state, () => ++calls % 2 === 0);
      slices++;
    }
    expect(slices).toBeGreaterThan(10);
    expect(state.tokens).toBe(reference(value));
  });

  it("stops once the count reaches the limit it was given", () => {
    const state = startTextCount("a b c d e f g h i j ".repeat(10_000));
    countTextTokens(state, () => false, 100);
    expect(state.tokens).toBeGreaterThanOrEqual(100);
    expect(state.tokens).toBeLessThan(200);
    expect(state.done).toBe(false);
  });

  it("finds reserved special-token text", () => {
    expect(specialTokenIn("hi <|endoftext|> there")).toBe("<|endoftext|>");
    expect(specialTokenIn("a <|im_start|>")).toBe("<|im_start|>");
    expect(specialTokenIn("<| not special |>")).toBeUndefined();
  });
});

describe("bytePairCount: the cheap lower bound before a long merge", () => {
  it("never exceeds the exact count (so stopping on it is safe)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 400 }), (value, stopAt) => {
        const long = value.repeat(Math.ceil(5_000 / Math.max(1, value.length)));
        const state = startTextCount(long);
        while (!state.done && state.tokens < stopAt) countTextTokens(state, () => false, stopAt);
        return state.done ? state.tokens === reference(long) : state.tokens <= reference(long);
      }),
      { numRuns: 150 },
    );
  });

  it("never exceeds the exact count when the text after a long piece is bounded with it (several long runs)", () => {
    const run = fc
      .tuple(fc.constantFrom("字", "漢", "😀", "🎉", "a", " ", "7", "é"), fc.integer({ min: 1_000, max: 3_000 }))
      .map(([unit, times]) => unit.repeat(times));
    fc.assert(
      fc.property(
        fc.array(fc.oneof(run, fragment), { minLength: 2, maxLength: 5 }),
        fc.double({ min: 0.05, max: 1.5, noNaN: true }),
        (parts, share) => {
          const value = parts.join("");
          const exact = reference(value);
          const stopAt = Math.max(1, Math.round(exact * share));
          const state = startTextCount(value);
          while (!state.done && state.tokens < stopAt) countTextTokens(state, () => false, stopAt);
          return state.done ? state.tokens === exact : state.tokens <= exact && state.tokens >= stopAt;
        },
      ),
      { numRuns: 150 },
    );
  });

  it("stops without merging a long run that fits alone when the text after it cannot fit with it", () => {
    // The hardening case: 125,000 emoji are at least 125,000 tokens, under a 128k window; the CJK after them adds
    // at least 22,857 (seven of its lead bytes per token at most). Merging the emoji run first cost ~140 ms.
    const state = startTextCount("😀".repeat(125_000) + "字".repeat(160_000));
    // One clock check passes (the one before the first piece): a merge would be left unfinished by the second.
    let clockChecks = 0;
    countTextTokens(state, () => ++clockChecks > 1, 128_000);
    expect(state.tokens).toBeGreaterThanOrEqual(128_000);
    expect(state.merging).toBeUndefined();
    expect(state.done).toBe(false);
  });

  it("stops at the limit without merging a long run that cannot fit (one token per emoji at least)", () => {
    const state = startTextCount("😀".repeat(50_000));
    countTextTokens(state, () => false, 10_000);
    expect(state.tokens).toBe(50_000);
    expect(state.done).toBe(false);
  });
});
