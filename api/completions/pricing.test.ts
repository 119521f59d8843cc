import { describe, expect, it } from "vitest";
import { effectiveMaxTokens, escrowFor, maxTokensPaidBy, sizeEscrow } from "./pricing.js";

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

describe("sizeEscrow (issue 11, item 8): without max_tokens the lock follows the balance", () => {
  const base = { prices: max, defaultMaxTokens: 1024, contextWindow: 128_000, promptTokens: 10 };

  it("locks the default length's price when the balance covers it", () => {
    expect(sizeEscrow({ ...base, requested: undefined, available: 1_000 })).toEqual({
      ok: true,
      maxTokens: 1024,
      creditsToLock: 51,
      capped: false,
    });
  });

  it("with 48 credits on the max tier, locks 48 and caps generation at the 900 tokens they pay for", () => {
    expect(sizeEscrow({ ...base, requested: undefined, available: 48 })).toEqual({
      ok: true,
      maxTokens: 900,
      creditsToLock: 48,
      capped: true,
    });
  });

  it("with exactly the tier price, caps generation at the flat range (500 tokens)", () => {
    expect(sizeEscrow({ ...base, requested: undefined, available: 40 })).toMatchObject({
      ok: true,
      maxTokens: 500,
      creditsToLock: 40,
    });
  });

  it("never locks more than the balance, and the cap is the most tokens the lock pays for", () => {
    for (const prices of [
      max,
      { creditsPerRequest: 18, creditsPer1kTokens: 9 },
      { creditsPerRequest: 2, creditsPer1kTokens: 1 },
    ]) {
      for (let available = Number(prices.creditsPerRequest); available < 80; available++) {
        const sizing = sizeEscrow({ ...base, prices, requested: undefined, available });
        if (!sizing.ok) throw new Error("expected a lock");
        expect(sizing.creditsToLock).toBeLessThanOrEqual(available);
        expect(Number(escrowFor(prices, sizing.maxTokens))).toBe(sizing.creditsToLock);
        if (sizing.maxTokens < 1024) expect(Number(escrowFor(prices, sizing.maxTokens + 1))).toBeGreaterThan(available);
      }
    }
  });

  it("error: below the tier price it is insufficient, requiring the tier price", () => {
    expect(sizeEscrow({ ...base, requested: undefined, available: 39 })).toEqual({
      ok: false,
      maxTokens: 1024,
      creditsRequired: 40,
    });
  });

  it("error: an explicit max_tokens is never capped: its price is required", () => {
    expect(sizeEscrow({ ...base, requested: 1_500, available: 48 })).toEqual({
      ok: false,
      maxTokens: 1_500,
      creditsRequired: 60,
    });
  });

  it("maxTokensPaidBy inverts the pricing rule", () => {
    expect(maxTokensPaidBy(max, 39)).toBe(0);
    expect(maxTokensPaidBy(max, 40)).toBe(500);
    expect(maxTokensPaidBy(max, 41)).toBe(550);
    expect(maxTokensPaidBy({ creditsPerRequest: 2, creditsPer1kTokens: 0 }, 2)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
