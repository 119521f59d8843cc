import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkerEvent, WorkerJobPayload } from "./workerProtocol.js";
import { WorkerClient, WorkerRequestError } from "./workerClient.js";

const payload: WorkerJobPayload = {
  job_id: "job_01JD0000000000000000000000",
  job_id_bytes32: `0x${"00".repeat(32)}`,
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  max_tokens: 4,
  escrow: { chain_id: 31337, address: `0x${"11".repeat(20)}` },
};

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A worker endpoint that answers every job with these NDJSON lines. */
async function workerAnswering(lines: string[]): Promise<string> {
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    res.end(lines.map((line) => `${line}\n`).join(""));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

async function eventsOf(endpoint: string): Promise<WorkerEvent[]> {
  const events: WorkerEvent[] = [];
  for await (const event of new WorkerClient("token").runJob(endpoint, payload, AbortSignal.timeout(5_000)))
    events.push(event);
  return events;
}

describe("WorkerClient.runJob", () => {
  it("yields token events with their text only, as the protocol's schema reads them", async () => {
    const endpoint = await workerAnswering([
      JSON.stringify({ type: "ack", worker: `0x${"22".repeat(20)}`, backend: "sim" }),
      JSON.stringify({ type: "token", text: "Hel", index: 0 }),
      JSON.stringify({ type: "token", text: "lo" }),
    ]);
    expect(await eventsOf(endpoint)).toEqual([
      { type: "ack", worker: `0x${"22".repeat(20)}`, backend: "sim" },
      { type: "token", text: "Hel" },
      { type: "token", text: "lo" },
    ]);
  });

  it("splits lines however the answer is cut: mid-line, mid-character, blank lines, a last line without newline", async () => {
    const body = Buffer.from(
      `${JSON.stringify({ type: "token", text: "é" })}\n\n${JSON.stringify({ type: "token", text: "b" })}\n` +
        JSON.stringify({ type: "token", text: "c" }),
    );
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      // Every byte in its own write, a few apart: "é" is two bytes, so it arrives split.
      let at = 0;
      const next = () => {
        if (at === body.length) return void res.end();
        res.write(body.subarray(at, ++at));
        setImmediate(next);
      };
      next();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(await eventsOf(endpoint)).toEqual([
      { type: "token", text: "é" },
      { type: "token", text: "b" },
      { type: "token", text: "c" },
    ]);
  });

  it("yields every line of a long answer read faster than it is consumed", async () => {
    const lines = Array.from({ length: 500 }, (_, index) => JSON.stringify({ type: "token", text: String(index) }));
    const endpoint = await workerAnswering(lines);
    const events: WorkerEvent[] = [];
    for await (const event of new WorkerClient("token").runJob(endpoint, payload, AbortSignal.timeout(5_000))) {
      events.push(event);
      if (events.length % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(events.map((event) => (event.type === "token" ? event.text : ""))).toEqual(
      lines.map((_, index) => String(index)),
    );
  });

  it("error: an answer cut before its end is a failure, not an end", async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ type: "token", text: "a" })}\n`, () => setTimeout(() => res.destroy(), 20));
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await expect(eventsOf(endpoint)).rejects.toThrow();
  });

  it("error: a token event without text is refused", async () => {
    const endpoint = await workerAnswering([JSON.stringify({ type: "token", text: 7 })]);
    await expect(eventsOf(endpoint)).rejects.toThrow();
  });

  it("yields a whole delivery's gathered tokens as one event with their texts in order", async () => {
    const endpoint = await workerAnswering([
      JSON.stringify({ type: "token", text: "A" }),
      JSON.stringify({ type: "tokens", texts: ["b", "", "c"], extra: 1 }),
    ]);
    expect(await eventsOf(endpoint)).toEqual([
      { type: "token", text: "A" },
      { type: "tokens", texts: ["b", "", "c"] },
    ]);
  });

  it("error: a tokens line with no texts, or a text that is not a string, is refused", async () => {
    for (const line of [{ type: "tokens", texts: [] }, { type: "tokens", texts: ["a", 2] }, { type: "tokens" }]) {
      const endpoint = await workerAnswering([JSON.stringify(line)]);
      await expect(eventsOf(endpoint)).rejects.toThrow();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it("error: a refusal carries the worker's status and the start of its answer", async () => {
    server = createServer((_req, res) => {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("busy");
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const error: unknown = await eventsOf(endpoint).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkerRequestError);
    expect(error).toMatchObject({ status: 503, message: "worker answered 503: busy" });
  });

  it("an abort drops a stream the worker keeps open", async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ type: "token", text: "a" })}\n`);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const abort = new AbortController();
    const seen: WorkerEvent[] = [];
    const run = (async () => {
      for await (const event of new WorkerClient("token").runJob(endpoint, payload, abort.signal)) {
        seen.push(event);
        abort.abort();
      }
    })();
    await expect(run).rejects.toThrow();
    expect(seen).toEqual([{ type: "token", text: "a" }]);
    server.closeAllConnections();
  });

  it("an abort before the call sends nothing and rejects with an AbortError", async () => {
    let requests = 0;
    server = createServer((req, res) => {
      requests++;
      req.resume();
      res.end();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const abort = new AbortController();
    abort.abort(new Error("gone"));
    const run = (async () => {
      for await (const event of new WorkerClient("token").runJob(endpoint, payload, abort.signal)) void event;
    })();
    await expect(run).rejects.toMatchObject({ name: "AbortError", cause: new Error("gone") });
    expect(requests).toBe(0);
  });

  it("leaves no listener on the job's signal once the answer is read", async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.end(`${JSON.stringify({ type: "token", text: "a" })}\n`);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const abort = new AbortController();
    const seen: WorkerEvent[] = [];
    for await (const event of new WorkerClient("token").runJob(endpoint, payload, abort.signal)) seen.push(event);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([{ type: "token", text: "a" }]);
    expect(getEventListeners(abort.signal, "abort")).toEqual([]);
  });

  it("reuses the connection of an answer read up to its done line", async () => {
    const done = {
      type: "done",
      finish_reason: "stop",
      usage: { prompt_tokens: 1, completion_tokens: 1 },
      receipt: {
        jobId: `0x${"00".repeat(32)}`,
        outputHash: `0x${"00".repeat(32)}`,
        promptTokens: 1,
        completionTokens: 1,
        finalTokenAt: 1,
      },
      signature: "0x00",
    };
    let connections = 0;
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify(done)}\n`);
      // The end of the body comes after the done line, as it may from a real worker.
      setTimeout(() => res.end(), 20);
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new WorkerClient("token");
    for (let job = 0; job < 3; job++) {
      for await (const event of client.runJob(endpoint, payload, AbortSignal.timeout(5_000)))
        if (event.type === "done") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(connections).toBe(1);
    server.closeAllConnections();
  });
});
