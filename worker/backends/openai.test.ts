import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { authHeaders, doneLine, jobPayload, readJobLines, runJob, tokenTexts } from "../testing/jobClient.js";
import { FAKE_CHUNKS, FAKE_USAGE, startFakeOpenAiUpstream } from "../testing/fakeOpenAiUpstream.js";
import type { FakeOpenAiUpstream } from "../testing/fakeOpenAiUpstream.js";
import { startWorkerProcess } from "../testing/startWorkerProcess.js";
import type { WorkerProcess } from "../testing/startWorkerProcess.js";

const WORKER_PORT = 8667;
const UPSTREAM_PORT = 8668;
const UPSTREAM_API_KEY = "sk-upstream-test";
let upstream: FakeOpenAiUpstream;
let worker: WorkerProcess;

const FAKE_MODELS = [
  "fake-ok",
  "fake-length",
  "fake-no-usage",
  "fake-http-error",
  "fake-midstream-error",
  "fake-hang",
  "fake-hang-after-first",
  "fake-slow",
];

beforeAll(async () => {
  upstream = await startFakeOpenAiUpstream(UPSTREAM_PORT);
  const models: Record<string, unknown> = {
    // The served id differs from the upstream's own name: the worker maps it.
    "llama-3.1-8b-instruct": {
      backend: "openai",
      baseUrl: `${upstream.baseUrl}/`,
      apiKey: UPSTREAM_API_KEY,
      upstreamModel: "fake-ok",
    },
  };
  // Port 1: nothing listens there, so connecting is refused at once.
  models["unreachable-model"] = { backend: "openai", baseUrl: "http://127.0.0.1:1" };
  // Long enough that the fakes that do answer are never timed out on a loaded test machine, short enough for the
  // two tests that wait for it.
  for (const id of FAKE_MODELS) models[id] = { backend: "openai", baseUrl: upstream.baseUrl, timeoutMs: 1_500 };
  const dir = mkdtempSync(join(tmpdir(), "worker-openai-"));
  const configPath = join(dir, "worker.json");
  writeFileSync(configPath, JSON.stringify({ models }));
  worker = await startWorkerProcess(WORKER_PORT, { WORKER_CONFIG: configPath });
});
afterAll(async () => {
  await worker?.stop();
  await upstream?.close();
});

function lastRequestBody(): Record<string, unknown> {
  const body = upstream.requests.at(-1)?.body;
  if (!body) throw new Error("the upstream saw no request");
  return body;
}

describe("openai backend", () => {
  it("passes the upstream's text through chunk by chunk, acknowledging as openai", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "llama-3.1-8b-instruct" }));
    expect(lines[0]?.line).toMatchObject({ type: "ack", backend: "openai" });
    expect(tokenTexts(lines)).toEqual(FAKE_CHUNKS);
    const done = doneLine(lines);
    expect(done.finish_reason).toBe("stop");
    const text = FAKE_CHUNKS.join("");
    expect(done.receipt.outputHash).toBe(`0x${createHash("sha256").update(text).digest("hex")}`);
  });

  it("asks the upstream for a stream with usage, under the upstream model name and key", async () => {
    const payload = jobPayload({
      model: "llama-3.1-8b-instruct",
      max_tokens: 33,
      temperature: 0.5,
      top_p: 0.9,
      seed: 7,
      stop: ["\n\n"],
      frequency_penalty: 0.1,
      presence_penalty: null,
    });
    await runJob(worker.url, payload);
    const request = upstream.requests.at(-1);
    expect(request?.headers.authorization).toBe(`Bearer ${UPSTREAM_API_KEY}`);
    expect(lastRequestBody()).toEqual({
      model: "fake-ok",
      messages: payload.messages,
      max_tokens: 33,
      stream: true,
      stream_options: { include_usage: true },
      stop: ["\n\n"],
      temperature: 0.5,
      top_p: 0.9,
      seed: 7,
      frequency_penalty: 0.1,
    });
  });

  it("takes usage from the upstream when it reports it", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-ok" }));
    const done = doneLine(lines);
    expect(done.usage).toEqual(FAKE_USAGE);
    expect(done.receipt).toMatchObject({
      promptTokens: FAKE_USAGE.prompt_tokens,
      completionTokens: FAKE_USAGE.completion_tokens,
    });
  });

  it("counts tokens itself when the upstream reports no usage", async () => {
    const payload = jobPayload({ model: "fake-no-usage" });
    const { lines } = await runJob(worker.url, payload);
    expect(doneLine(lines).usage).toEqual({
      prompt_tokens: encodeChat(payload.messages as never, "gpt-4o").length,
      completion_tokens: FAKE_CHUNKS.length,
    });
  });

  it("reports finish_reason length when the upstream ran out of max_tokens", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-length" }));
    expect(doneLine(lines).finish_reason).toBe("length");
  });

  it("error: maps an upstream HTTP error to backend_error", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-http-error" }));
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "error"]);
    expect(lines[1]?.line).toMatchObject({ code: "backend_error", message: expect.stringContaining("500") });
  });

  it("error: maps an error event in the middle of the stream to backend_error", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-midstream-error" }));
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "token", "error"]);
    expect(lines[2]?.line).toMatchObject({ code: "backend_error" });
  });

  it("error: maps an upstream that never sends a token to backend_timeout", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-hang" }));
    expect(lines.at(-1)?.line).toMatchObject({ type: "error", code: "backend_timeout" });
  });

  it("error: maps an upstream that stalls mid-stream to backend_timeout", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "fake-hang-after-first" }));
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "token", "error"]);
    expect(lines[2]?.line).toMatchObject({ code: "backend_timeout" });
  });

  it("error: maps an unreachable upstream to backend_error", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "unreachable-model" }));
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "error"]);
    expect(lines[1]?.line).toMatchObject({ code: "backend_error" });
  });

  it("cancels the upstream request when the job is cancelled", async () => {
    const payload = jobPayload({ model: "fake-slow" });
    const response = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(payload),
    });
    if (!response.body) throw new Error("no body");
    const lines = readJobLines(response.body);
    let tokens = 0;
    while (tokens < 2) {
      const next = await lines.next();
      if (next.done) throw new Error("stream ended early");
      if (next.value.line.type === "token") tokens += 1;
    }
    const abortedBefore = upstream.abortedConnections();
    const cancel = await fetch(`${worker.url}/v1/jobs/${String(payload.job_id)}/cancel`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ delivered_tokens: 2 }),
    });
    expect(((await cancel.json()) as { text: string }).text).toBe("t0 t1 ");
    // A generous bound: the loop ends as soon as the condition holds; a loaded machine must not fail it.
    const deadline = Date.now() + 10_000;
    while (upstream.abortedConnections() === abortedBefore && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(upstream.abortedConnections()).toBe(abortedBefore + 1);
  });
});
