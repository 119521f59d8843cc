import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { outputHashOf as clientOutputHashOf } from "@credit-metered/client";
import { outputHashOf } from "./receiptHashes.js";

describe("outputHashOf on node:crypto (the gateway's receipt check)", () => {
  it("gives the client package's hash for any text, lone surrogates and NUL included", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), fc.string()), (text) => {
        expect(outputHashOf(text)).toBe(clientOutputHashOf(text));
      }),
      { numRuns: 1_000 },
    );
    for (const text of ["", "\ud800", "a\udc00b", "\udbff\udfff", "\u0000", "é".repeat(10_000)])
      expect(outputHashOf(text)).toBe(clientOutputHashOf(text));
  });
});
