import { describe, expect, it } from "vitest";
import { ndjsonLines } from "./ndjsonLines.js";

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part);
}

async function collect(source: AsyncIterable<string>): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of source) lines.push(line);
  return lines;
}

describe("ndjsonLines", () => {
  it("yields lines split across chunks once complete", async () => {
    expect(await collect(ndjsonLines(chunks('{"a"', ":1}\n{", '"b":2}\n')))).toEqual(['{"a":1}', '{"b":2}']);
  });

  it("skips blank lines and yields a final line without newline", async () => {
    expect(await collect(ndjsonLines(chunks("x\n\n", "y")))).toEqual(["x", "y"]);
  });

  it("keeps multi-byte characters split across chunks intact", async () => {
    const bytes = new TextEncoder().encode('"é"\n');
    async function* split() {
      yield bytes.slice(0, 2);
      yield bytes.slice(2);
    }
    expect(await collect(ndjsonLines(split()))).toEqual(['"é"']);
  });
});
