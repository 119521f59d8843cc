import { describe, expect, it } from "vitest";
import { readServerSentEvents } from "./readServerSentEvents.js";

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
}

async function collect(parts: string[]): Promise<string[]> {
  const events: string[] = [];
  for await (const data of readServerSentEvents(streamOf(parts))) events.push(data);
  return events;
}

describe("readServerSentEvents", () => {
  it("yields each event's data, whatever the chunk boundaries", async () => {
    expect(await collect(['data: {"a"', ":1}\n\nda", "ta: [DONE]\n\n"])).toEqual(['{"a":1}', "[DONE]"]);
  });

  it("accepts CRLF line endings and skips comments and other fields", async () => {
    expect(await collect([": keep-alive\r\n\r\nevent: message\r\nid: 3\r\ndata: x\r\n\r\n"])).toEqual(["x"]);
  });

  it("joins multi-line data with newlines", async () => {
    expect(await collect(["data: one\ndata: two\n\n"])).toEqual(["one\ntwo"]);
  });

  it("yields a final event that lacks its blank line", async () => {
    expect(await collect(["data: last"])).toEqual(["last"]);
  });
});
