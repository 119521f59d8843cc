import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../errors/ApiError.js";
import { MAX_JSON_DEPTH, assertJsonDepth } from "./jsonDepth.js";

const refused = (text: string) => {
  try {
    assertJsonDepth(Buffer.from(text));
    return false;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return true;
  }
};

/** The nesting depth of a parsed JSON value, counted the way the check counts brackets. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === "object") return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe("assertJsonDepth", () => {
  it("accepts a body nested exactly MAX_JSON_DEPTH levels and refuses one level more", () => {
    expect(refused("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).toBe(false);
    expect(refused("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it("does not count brackets inside strings, whatever escapes precede the closing quote", () => {
    const inside = "[".repeat(MAX_JSON_DEPTH + 5);
    expect(refused(JSON.stringify({ content: inside }))).toBe(false);
    expect(refused(JSON.stringify({ content: `\\"${inside}\\\\` }))).toBe(false);
    expect(refused(JSON.stringify({ a: "\\", b: inside }))).toBe(false);
  });

  it("leaves an unterminated string to the parser", () => {
    expect(refused('{"content": "[[[[')).toBe(false);
  });

  it("refuses exactly the JSON values nested deeper than MAX_JSON_DEPTH (property)", () => {
    const nested = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "字") }),
        fc.integer(),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.string({ unit: fc.constantFrom("[", '"', "\\", "k") }), tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    const deep = fc
      .tuple(nested, fc.integer({ min: 0, max: MAX_JSON_DEPTH + 3 }))
      .map(([value, wraps]) => Array.from({ length: wraps }).reduce<unknown>((inner) => [inner], value));
    fc.assert(
      fc.property(deep, (value) => {
        expect(refused(JSON.stringify(value))).toBe(depthOf(value) > MAX_JSON_DEPTH);
      }),
      { numRuns: 500 },
    );
  });
});
