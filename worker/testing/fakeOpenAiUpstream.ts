import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { once } from "node:events";

/**
 * TEST DOUBLE of an OpenAI-compatible inference server (vLLM, llama.cpp…), standing in for the GPU server
 * outside the product. It streams `chat.completion.chunk` SSE events, and its behaviour is chosen by the
 * `model` of the request:
 * - `fake-ok`: "Hello", ",", " world", "!" then finish "stop" and a usage chunk (prompt 42, completion 5 —
 *   deliberately not the chunk count, so a test can tell reported usage from counted chunks);
 * - `fake-length`: the same chunks, finish "length";
 * - `fake-no-usage`: the same chunks, no usage chunk;
 * - `fake-http-error`: HTTP 500 with an OpenAI error body;
 * - `fake-midstream-error`: one chunk, then an `error` event;
 * - `fake-hang`: headers, then silence;
 * - `fake-hang-after-first`: one chunk, then silence;
 * - `fake-slow`: one chunk every 100 ms, 50 chunks.
 */
export const FAKE_CHUNKS = ["Hello", ",", " world", "!"];
export const FAKE_USAGE = { prompt_tokens: 42, completion_tokens: 5 };

export type FakeUpstreamRequest = { headers: IncomingMessage["headers"]; body: Record<string, unknown> };

export type FakeOpenAiUpstream = {
  baseUrl: string;
  requests: FakeUpstreamRequest[];
  /** Connections closed by the client before the fake finished answering them. */
  abortedConnections(): number;
  close(): Promise<void>;
};

function chunk(content: string | undefined, finishReason: string | null = null) {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 0,
    model: "fake",
    choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finishReason }],
  };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = "";
  for await (const part of req) raw += String(part);
  return JSON.parse(raw) as Record<string, unknown>;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function startFakeOpenAiUpstream(port: number): Promise<FakeOpenAiUpstream> {
  const requests: FakeUpstreamRequest[] = [];
  let aborted = 0;
  const open = new Set<ServerResponse>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    requests.push({ headers: req.headers, body });
    const model = String(body.model);
    if (model === "fake-http-error") {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the GPU caught fire", type: "server_error" } }));
      return;
    }
    open.add(res);
    res.on("close", () => {
      if (!res.writableFinished) aborted += 1;
      open.delete(res);
    });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data: unknown) => res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    send({ ...chunk(undefined), choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] });

    if (model === "fake-hang") return;
    if (model === "fake-hang-after-first" || model === "fake-midstream-error") {
      send(chunk(FAKE_CHUNKS[0]));
      if (model === "fake-midstream-error") {
        send({ error: { message: "upstream worker crashed", type: "server_error" } });
        res.end();
      }
      return;
    }
    if (model === "fake-slow") {
      for (let i = 0; i < 50 && !res.destroyed; i += 1) {
        send(chunk(`t${i} `));
        await sleep(100);
      }
      if (!res.destroyed) {
        send(chunk(undefined, "stop"));
        send("[DONE]");
        res.end();
      }
      return;
    }
    for (const content of FAKE_CHUNKS) {
      send(chunk(content));
      await sleep(5);
    }
    send(chunk(undefined, model === "fake-length" ? "length" : "stop"));
    if (model !== "fake-no-usage")
      send({ ...chunk(undefined), choices: [], usage: { ...FAKE_USAGE, total_tokens: 47 } });
    send("[DONE]");
    res.end();
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    abortedConnections: () => aborted,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
