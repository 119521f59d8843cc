import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bytes32ToJobId, isJobId, jobIdToBytes32, newJobId } from "./jobId.js";

describe("newJobId", () => {
  it("makes well-formed job ids that round-trip through the escrow's bytes32", () => {
    for (let i = 0; i < 1_000; i++) {
      const id = newJobId();
      expect(isJobId(id)).toBe(true);
      expect(bytes32ToJobId(jobIdToBytes32(id))).toBe(id);
    }
  });

  it("makes ids that sort in creation order, within one millisecond too", () => {
    const at = Date.now();
    const ids = Array.from({ length: 5_000 }, (_, i) => newJobId(at + Math.floor(i / 1_000)));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("draws every random character from all 32 Crockford characters about evenly", () => {
    const counts = new Map<string, number>();
    const at = Date.now() + 10_000;
    // A new millisecond each time: the whole random part is drawn afresh (not incremented).
    for (let i = 0; i < 4_000; i++)
      for (const char of newJobId(at + i).slice(-16)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(32);
    const expected = (4_000 * 16) / 32;
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.2);
  });
});

describe("jobIdToBytes32", () => {
  it("is the inverse of bytes32ToJobId for every 128-bit value", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (value) => {
        const word = `0x${value.toString(16).padStart(64, "0")}` as const;
        expect(jobIdToBytes32(bytes32ToJobId(word))).toBe(word);
      }),
      { numRuns: 2_000 },
    );
  });
});
