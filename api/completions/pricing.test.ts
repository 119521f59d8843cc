import { describe, expect, it } from "vitest";
import { effectiveMaxTokens, escrowFor } from "./pricing.js";

const max = { creditsPerRequest: 40, creditsPer1kTokens: 20 };

describe("effectiveMaxTokens", () => {
  it("uses the default when the request gives none", () => {
    expect(effectiveMaxTokens(undefined, 1024, 128_000, 10)).toBe(1024);
  });

  it("keeps a max_tokens that fits", () => {
    expect(effectiveMaxTokens(50, 1024, 32_768, 10)).toBe(50);
  });

  it("clamps max_tokens to the room the prompt leaves in the context window", () => {
    expect(effectiveMaxTokens(10_000, 1024, 32_768, 30_000)).toBe(2_768);
  });
});

describe("escrow estimate", () => {
  it("locks the per-request price for completions up to 500 tokens", () => {
    expect(escrowFor(max, 500)).toBe(40n);
  });

  it("locks the worst case for a long max_tokens (1024 tokens on the max tier: 40 + ceil(524 * 20 / 1000))", () => {
    expect(escrowFor(max, 1024)).toBe(51n);
  });
});
