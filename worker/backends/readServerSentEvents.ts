/**
 * Yields the `data` payload of each Server-Sent Event in a byte stream (multi-line data joined with "\n").
 * Comments, `event:`/`id:` fields and empty events are skipped: OpenAI-compatible servers only use `data`.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let buffered = "";
  let data: string[] = [];
  const flushEvent = function* () {
    if (data.length > 0) yield data.join("\n");
    data = [];
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let newline = buffered.search(/\r?\n|\r/);
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        const separatorLength = buffered.startsWith("\r\n", newline) ? 2 : 1;
        buffered = buffered.slice(newline + separatorLength);
        if (line === "") yield* flushEvent();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        newline = buffered.search(/\r?\n|\r/);
      }
    }
  } finally {
    // Stopping early (cancel, error) must release the upstream connection.
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  buffered += decoder.decode();
  if (buffered.startsWith("data:")) data.push(buffered.slice(5).replace(/^ /, ""));
  yield* flushEvent();
}
