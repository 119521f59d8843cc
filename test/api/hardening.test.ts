import { createHash } from "node:crypto";
import { connect } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { parseEventLogs, type Hex } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { chatBody, expectErrorBody, rawRequest, waitForJobStatus, type Job, type RawResponse } from "../support/api.js";
import { accountOf, creditEscrowAbi, publicClient } from "../support/chain.js";
import { readLoopHold } from "../support/loopHold.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

// Issue 11 ("Hardening"): one describe per item, each a regression test against the real stack.

const LITE = "llama-3.2-3b-instruct";
const MAX_TIER = "llama-3.3-70b-instruct";
const SMALL_WINDOW = "qwen3-1.7b"; // 32,768 tokens

function demoKey(): string {
  return stackInfo().demo.apiKey;
}

function complete(body: unknown, apiKey: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest("POST", "/v1/chat/completions", { apiKey, body, headers });
}

/** The job id a completion answer names. */
function jobIdOf(response: RawResponse): string {
  return String(response.headers["x-service-job-id"]);
}

describe("item 1: the context-length check is bounded and never stalls other clients", () => {
  let brokeKey: string;

  beforeAll(async () => {
    // The check runs before the credit check: a key with 0 credits is enough to send the request.
    brokeKey = (await createClientWallet({ usdg: 0n })).apiKey;
  });

  /** Sends `body` and samples GET /healthz back to back until the answer arrives. */
  async function whileSampling(
    body: unknown,
  ): Promise<{ response: RawResponse; elapsedMs: number; samples: number[] }> {
    const samples: number[] = [];
    const started = performance.now();
    let answered = false;
    const request = complete(body, brokeKey).finally(() => {
      answered = true;
    });
    while (!answered) {
      const sent = performance.now();
      const health = await rawRequest("GET", "/healthz");
      expect(health.status).toBe(200);
      samples.push(performance.now() - sent);
    }
    const response = await request;
    return { response, elapsedMs: performance.now() - started, samples };
  }

  it("a 1 MB message of emoji and CJK without spaces is answered context_length_exceeded within 1 s, never holding the gateway's event loop for 100 ms", async () => {
    // Two runs without a space, each one pre-tokenizer piece: the worst case for byte-pair merging.
    const content = "😀".repeat(125_000) + "字".repeat(160_000);
    expect(Buffer.byteLength(content)).toBeGreaterThan(960_000);
    const body = { model: MAX_TIER, messages: [{ role: "user", content }] };
    // The bound is the issue's, absolute, and holds from the first request: the gateway compiles the counter's
    // long-prompt path before it listens (warmUpCounting). Two retries, for machine load only: these 2 cores may be
    // shared with other test runs, and a burst of them can deschedule the gateway for longer than the bound (seen
    // here: the same request 3-4 times slower while another stack started; twice in a row at a load of 5-6 while
    // CI's other lane ran). A systematic stall fails every attempt.
    // "Never stalls other clients" is judged by the longest stretch the gateway's main thread held its event loop,
    // in CPU time (`gateway_event_loop_busy_cpu_max_seconds`, as the fuzz suite judges every request): the /healthz
    // latency another client sees also counts the time the host did not run the gateway at all, and on CI (three
    // suites on two cores) that alone passed 100 ms in all three attempts of one run (worst 425, 203 ms; an idle
    // /healthz 96 ms). The latencies stay in the report, with an idle /healthz's, to tell the two apart.
    const attempts: {
      elapsedMs: number;
      loopCpuMs: number;
      loopWallMs: number;
      worstSampleMs: number;
      samples: number;
      idleWorstMs: number;
    }[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const idle: number[] = [];
      for (let i = 0; i < 10; i++) {
        const sent = performance.now();
        await rawRequest("GET", "/healthz");
        idle.push(performance.now() - sent);
      }
      await readLoopHold(stackInfo().apiUrl); // a new window for the request's own stretch
      const { response, elapsedMs, samples } = await whileSampling(body);
      const hold = await readLoopHold(stackInfo().apiUrl);
      expectErrorBody(response, 400, "context_length_exceeded", { param: "messages" });
      expect(samples.length).toBeGreaterThan(0);
      attempts.push({
        elapsedMs,
        loopCpuMs: hold.cpuMs,
        loopWallMs: hold.wallMs,
        worstSampleMs: Math.max(...samples),
        samples: samples.length,
        idleWorstMs: Math.max(...idle),
      });
      if (elapsedMs <= 1_000 && hold.cpuMs <= 100) break;
    }
    const best = attempts.at(-1)!;
    console.info(`1 MB context check: ${JSON.stringify(attempts)}`);
    expect(best.elapsedMs, JSON.stringify(attempts)).toBeLessThanOrEqual(1_000);
    expect(best.loopCpuMs, JSON.stringify(attempts)).toBeLessThanOrEqual(100);
  });

  it("counts a prompt with long runs exactly: one token under the window passes, the window itself is refused", async () => {
    const framing = encodeChat([{ role: "user", content: "" }], "gpt-4o").length;
    const window = 32_768;
    const run = (tokens: number) => "字".repeat(tokens - framing);
    // The workers' tokenizer agrees: one token per 字 in a run, so the boundary is exact.
    expect(encodeChat([{ role: "user", content: run(window) }], "gpt-4o").length).toBe(window);

    const atWindow = await complete(
      { model: SMALL_WINDOW, messages: [{ role: "user", content: run(window) }] },
      brokeKey,
    );
    expectErrorBody(atWindow, 400, "context_length_exceeded", { param: "messages" });
    // One token less fits: the next check (credits) is the one that answers.
    const underWindow = await complete(
      { model: SMALL_WINDOW, messages: [{ role: "user", content: run(window - 1) }] },
      brokeKey,
    );
    expectErrorBody(underWindow, 402, "insufficient_credits");
  });

  it("error: reserved special-token text in a message is invalid_request naming it (the workers refuse it too)", async () => {
    const response = await complete(
      { model: LITE, messages: [{ role: "user", content: "what does <|endoftext|> mean?" }] },
      brokeKey,
    );
    expectErrorBody(response, 400, "invalid_request", { param: "messages.0.content" });
  });
});

describe("item 2: malformed input is a 4xx in the spec's format, never a 500", () => {
  const json = Buffer.from(JSON.stringify(chatBody(LITE, { max_tokens: 4 })));

  function withEncoding(body: Buffer, encoding: string): Promise<RawResponse> {
    return rawRequest("POST", "/v1/chat/completions", {
      apiKey: demoKey(),
      body,
      headers: { "content-type": "application/json", "content-encoding": encoding },
    });
  }

  it.each([
    ["gzip", gzipSync(json)],
    ["deflate", deflateSync(json)],
    ["br", brotliCompressSync(json)],
  ])("error: a corrupt %s body is invalid_request (400)", async (encoding, compressed) => {
    // Flipped bytes in the middle and a truncated tail: both are corrupt streams.
    const flipped = Buffer.from(compressed);
    for (let i = 4; i < flipped.length - 4; i += 3) flipped[i] = flipped[i]! ^ 0x5a;
    expectErrorBody(await withEncoding(flipped, encoding), 400, "invalid_request", { param: null });
    const truncated = compressed.subarray(0, Math.max(2, compressed.length - 6));
    expectErrorBody(await withEncoding(truncated, encoding), 400, "invalid_request", { param: null });
    expectErrorBody(await withEncoding(Buffer.from("plain text"), encoding), 400, "invalid_request");
  });

  it("error: a deeply nested field is no 500, also with an Idempotency-Key (refused by the depth guard)", async () => {
    const broke = await createClientWallet({ usdg: 0n });
    const deep = `{"model":"${LITE}","messages":[{"role":"user","content":"hi"}],"extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: broke.apiKey,
      body: deep,
      headers: { "idempotency-key": `deep-${Date.now()}` },
    });
    expectErrorBody(response, 400, "invalid_request", { param: null });
  });

  it("error: a Content-Encoding the gateway does not decode is unsupported_media_type (415)", async () => {
    expectErrorBody(await withEncoding(json, "compress"), 415, "unsupported_media_type");
  });

  it("a well-formed gzip body is decoded (the request reaches the credit check)", async () => {
    const broke = await createClientWallet({ usdg: 0n });
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: broke.apiKey,
      body: gzipSync(json),
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expectErrorBody(response, 402, "insufficient_credits");
  });

  it.each([
    ["GET", "/v1/jobs/%s", 404, "job_not_found"],
    ["GET", "/v1/models/%s", 400, "model_not_found"],
    ["POST", "/v1/jobs/%s/dispute", 404, "job_not_found"],
    ["DELETE", "/v1/webhooks/%s", 404, "webhook_not_found"],
  ] as const)(
    "error: malformed percent-encoding in the path id of %s %s is %i %s",
    async (method, template, status, code) => {
      for (const id of ["%ZZ", "%", "%C3%28", "job_%E0%A4%A", "%00%ZZ"]) {
        const response = await rawRequest(method, template.replace("%s", id), {
          apiKey: demoKey(),
          ...(method === "POST" ? { body: { received_output_hash: `sha256:${"0".repeat(64)}` } } : {}),
        });
        expectErrorBody(response, status, code);
      }
    },
  );

  it("error: a 20,000-character model is model_not_found, in a body, a path and a filter", async () => {
    const long = "m".repeat(20_000);
    expectErrorBody(await complete(chatBody(long), demoKey()), 400, "model_not_found", { param: "model" });
    // URLs stay under the header limit (16 KB); a longer one is item 10's 431.
    const path = await rawRequest("GET", `/v1/models/${"m".repeat(10_000)}`, { apiKey: demoKey() });
    expectErrorBody(path, 400, "model_not_found");
    const filter = await rawRequest("GET", `/v1/jobs?model=${"m".repeat(10_000)}`, { apiKey: demoKey() });
    expectErrorBody(filter, 400, "invalid_request", { param: "model" });
  });
});

describe("item 3: ids match exactly, or they are unknown", () => {
  let client: ClientWallet;
  let jobId: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 1n });
    const response = await complete(chatBody(LITE, { max_tokens: 4 }), client.apiKey);
    expect(response.status, response.body).toBe(200);
    jobId = jobIdOf(response);
  });

  const variants = (id: string) => [
    `\u0000${id}`,
    `${id}\u0000`,
    `${id.slice(0, 5)}\u0000${id.slice(5)}`,
    `${id}\u0001`,
    `${id}\t`,
    `${id}\n`,
    `${id}\u007f`,
    `${id}\u0085`,
    ` ${id}`,
    `${id} `,
    id.toUpperCase(),
  ];

  it("error: a model with a control character, a space or another case is model_not_found and nothing is charged", async () => {
    const before = await accountOf(client.wallet);
    for (const model of variants(LITE)) {
      const response = await complete(chatBody(model, { max_tokens: 4 }), client.apiKey);
      expectErrorBody(response, 400, "model_not_found", { param: "model" });
      expect(response.headers["x-service-job-id"]).toBeUndefined();
    }
    expect(await accountOf(client.wallet)).toEqual(before);
  });

  it("error: GET /v1/models/{id} with a control character or space around the id is model_not_found", async () => {
    for (const model of variants(LITE)) {
      const response = await rawRequest("GET", `/v1/models/${encodeURIComponent(model)}`, { apiKey: client.apiKey });
      expectErrorBody(response, 400, "model_not_found");
    }
    expect((await rawRequest("GET", `/v1/models/${LITE}`, { apiKey: client.apiKey })).status).toBe(200);
  });

  it("error: a job id with a control character is job_not_found, on reads and disputes", async () => {
    for (const id of [`${jobId}%00`, `%00${jobId}`, `${jobId}%0A`, `${jobId}%20`, jobId.toLowerCase()]) {
      expectErrorBody(await rawRequest("GET", `/v1/jobs/${id}`, { apiKey: client.apiKey }), 404, "job_not_found");
      const dispute = await rawRequest("POST", `/v1/jobs/${id}/dispute`, {
        apiKey: client.apiKey,
        body: { received_output_hash: `sha256:${"0".repeat(64)}` },
      });
      expectErrorBody(dispute, 404, "job_not_found");
    }
    expect((await rawRequest("GET", `/v1/jobs/${jobId}`, { apiKey: client.apiKey })).status).toBe(200);
  });

  it("error: a job-list model filter with a control character is invalid_request naming model", async () => {
    for (const model of [`${LITE}%00`, `%00${LITE}`, `${LITE}%01`]) {
      const response = await rawRequest("GET", `/v1/jobs?model=${model}`, { apiKey: client.apiKey });
      expectErrorBody(response, 400, "invalid_request", { param: "model" });
    }
  });
});

describe("item 4: every query parameter is one plain value of its documented form", () => {
  function list(query: string): Promise<RawResponse> {
    return rawRequest("GET", `/v1/jobs?${query}`, { apiKey: demoKey() });
  }

  it("error: the array forms of every job-list parameter name the parameter", async () => {
    for (const [query, param] of [
      ["status[]=failed", "status"],
      ["model[]=qwen3-1.7b", "model"],
      ["limit[]=5", "limit"],
      ["before[]=job_01ARZ3NDEKTSV4RRFFQ69G5FAV", "before"],
      ["after[]=job_01ARZ3NDEKTSV4RRFFQ69G5FAV", "after"],
      ["status[0]=failed", "status"],
      ["status%5B%5D=failed", "status"],
    ] as const) {
      expectErrorBody(await list(query), 400, "invalid_request", { param });
    }
  });

  it("error: a repeated parameter names it", async () => {
    expectErrorBody(await list("status=failed&status=settled"), 400, "invalid_request", { param: "status" });
    expectErrorBody(await list("limit=5&limit=5"), 400, "invalid_request", { param: "limit" });
  });

  it("error: limit is decimal digits only (0x5, 1e1, 5.0, +5, -1, ' 5', '', five)", async () => {
    for (const value of ["0x5", "1e1", "5.0", "%2B5", "-1", "%205", "", "five", "0", "101", "Infinity"]) {
      expectErrorBody(await list(`limit=${value}`), 400, "invalid_request", { param: "limit" });
    }
  });

  it("error: status, before and after outside their forms name the parameter", async () => {
    expectErrorBody(await list("status="), 400, "invalid_request", { param: "status" });
    expectErrorBody(await list("status=SETTLED"), 400, "invalid_request", { param: "status" });
    expectErrorBody(await list("before=job_x"), 400, "invalid_request", { param: "before" });
    expectErrorBody(await list("after="), 400, "invalid_request", { param: "after" });
  });

  it("error: an unknown parameter is refused by name on every endpoint", async () => {
    expectErrorBody(await list("limit=5&foo=bar"), 400, "invalid_request", { param: "foo" });
    for (const [method, path] of [
      ["GET", "/v1/models?verbose=1"],
      ["GET", `/v1/models/${LITE}?verbose=1`],
      ["GET", "/v1/account?verbose=1"],
      ["GET", "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV?verbose=1"],
    ] as const) {
      expectErrorBody(await rawRequest(method, path, { apiKey: demoKey() }), 400, "invalid_request", {
        param: "verbose",
      });
    }
    const completion = await rawRequest("POST", "/v1/chat/completions?verbose=1", {
      apiKey: demoKey(),
      body: chatBody(LITE),
    });
    expectErrorBody(completion, 400, "invalid_request", { param: "verbose" });
    const dispute = await rawRequest("POST", "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV/dispute?verbose=1", {
      apiKey: demoKey(),
      body: { received_output_hash: `sha256:${"0".repeat(64)}` },
    });
    expectErrorBody(dispute, 400, "invalid_request", { param: "verbose" });
  });

  it("plain values of the documented form still work", async () => {
    const response = await list("limit=5&status=settled&model=qwen3-1.7b");
    expect(response.status, response.body).toBe(200);
    expect(response.json<{ data: Job[] }>().data.length).toBeLessThanOrEqual(5);
  });
});

describe("item 5: null is the same as absent for every optional request field", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 1n });
  });

  it("stream: null answers like an absent stream (a whole completion)", async () => {
    const response = await complete(chatBody(LITE, { stream: null, max_tokens: 4 }), client.apiKey);
    expect(response.status, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.json<{ object: string }>().object).toBe("chat.completion");
  });

  it("every optional field null at once is a plain request", async () => {
    const response = await complete(
      {
        model: LITE,
        messages: [{ role: "user", content: "Hello", name: null }],
        stream: null,
        stream_options: null,
        max_tokens: null,
        max_completion_tokens: null,
        temperature: null,
        top_p: null,
        frequency_penalty: null,
        presence_penalty: null,
        stop: null,
        seed: null,
        user: null,
        n: null,
        logprobs: null,
        response_format: null,
        tools: null,
        tool_choice: null,
      },
      client.apiKey,
    );
    expect(response.status, response.body).toBe(200);
    expect(response.json<{ object: string }>().object).toBe("chat.completion");
  });

  it("stream_options.include_usage: null on a stream is a stream without usage", async () => {
    const response = await complete(
      chatBody(LITE, { stream: true, stream_options: { include_usage: null }, max_tokens: 4 }),
      client.apiKey,
    );
    expect(response.status, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
  });
});

describe("item 8: without max_tokens a balance that covers the tier price is enough", () => {
  let client: ClientWallet;
  let model: string;

  beforeAll(async () => {
    // A max-tier model (40 per request, 20 per 1k) whose worker always writes more than 700 tokens, so a capped
    // max_tokens shows in the output.
    model = await claimCatalogModel("capped", { tier: "max", contextWindow: 128_000 });
    client = await createClientWallet({ usdg: 1n });
    await startExtraWorker(
      { models: [model], minOutputTokens: 700, maxOutputTokens: 720, tokensPerSecond: 20_000, ttftMs: 5 },
      client.apiKey,
    );
    // 100 credits → 60 (a 500-token job at the flat price) → 42 (one pro-tier job).
    const first = await complete(chatBody(model, { max_tokens: 500 }), client.apiKey);
    expect(first.status, first.body).toBe(200);
    await waitForJobStatus(client.apiKey, jobIdOf(first), "settled");
    const second = await complete(chatBody("gemma-3-27b-it", { max_tokens: 4 }), client.apiKey);
    expect(second.status, second.body).toBe(200);
    await waitForJobStatus(client.apiKey, jobIdOf(second), "settled");
    expect((await accountOf(client.wallet)).available).toBe(42n);
  });

  it("with 42 credits, locks 42 and generates the 600 tokens they pay for (finish_reason length)", async () => {
    const response = await complete(
      { model, messages: [{ role: "user", content: "Tell me everything." }] },
      client.apiKey,
    );
    expect(response.status, response.body).toBe(200);
    const completion = response.json<{
      choices: { finish_reason: string }[];
      usage: { completion_tokens: number };
    }>();
    // 40 + ceil((600 − 500) × 20 / 1000) = 42: the worker was told max_tokens 600.
    expect(completion.usage.completion_tokens).toBe(600);
    expect(completion.choices[0]!.finish_reason).toBe("length");

    const escrowReceipt = await publicClient().getTransactionReceipt({
      hash: String(response.headers["x-service-tx-hash"]) as Hex,
    });
    const [opened] = parseEventLogs({ abi: creditEscrowAbi, logs: escrowReceipt.logs, eventName: "JobOpened" });
    expect(opened!.args.jobId).toBe(jobIdToBytes32(jobIdOf(response)));
    expect(opened!.args.creditsLocked).toBe(42n);
    const job = await waitForJobStatus(client.apiKey, jobIdOf(response), "settled");
    expect(job.credits_charged).toBe(42);
  });

  it("error: below the tier price it is insufficient_credits requiring the tier price", async () => {
    const response = await complete({ model, messages: [{ role: "user", content: "And more." }] }, client.apiKey);
    const error = expectErrorBody(response, 402, "insufficient_credits");
    expect(error.details).toEqual({ credits_remaining: 0, credits_required: 40, tier: "max" });
  });
});

describe("item 9: a dispute is read back at once", () => {
  it("GET /v1/jobs/{id} right after dispute_opened: true shows the job disputed", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const response = await complete(chatBody(LITE, { max_tokens: 8 }), client.apiKey);
    expect(response.status, response.body).toBe(200);
    const job = await waitForJobStatus(client.apiKey, jobIdOf(response), "settled");
    const claimed = `sha256:${createHash("sha256").update("something else entirely").digest("hex")}`;
    const dispute = await rawRequest("POST", `/v1/jobs/${job.id}/dispute`, {
      apiKey: client.apiKey,
      body: { received_output_hash: claimed },
    });
    expect(dispute.status, dispute.body).toBe(200);
    expect(dispute.json<{ dispute_opened: boolean }>().dispute_opened).toBe(true);

    const read = await rawRequest("GET", `/v1/jobs/${job.id}`, { apiKey: client.apiKey });
    expect(read.status).toBe(200);
    expect(read.json<Job>().status).toBe("disputed");
    const listed = await rawRequest("GET", "/v1/jobs?status=disputed", { apiKey: client.apiKey });
    expect(listed.json<{ data: Job[] }>().data.map((entry) => entry.id)).toContain(job.id);
    const again = await rawRequest("POST", `/v1/jobs/${job.id}/dispute`, {
      apiKey: client.apiKey,
      body: { received_output_hash: claimed },
    });
    expectErrorBody(again, 409, "dispute_already_open");
  });
});

describe("item 10: every answer is in the spec's format", () => {
  it("error: oversized request headers are 431 headers_too_large with the spec's error body", async () => {
    const response = await rawRequest("GET", "/v1/models", {
      apiKey: demoKey(),
      headers: { "x-padding": "p".repeat(20_000) },
    });
    expectErrorBody(response, 431, "headers_too_large");
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    // The gateway keeps serving.
    expect((await rawRequest("GET", "/healthz")).status).toBe(200);
  });

  it.each([
    ["DELETE", "/v1/models", "GET, HEAD"],
    ["POST", `/v1/models/${LITE}`, "GET, HEAD"],
    ["GET", "/v1/chat/completions", "POST"],
    ["PUT", "/v1/chat/completions", "POST"],
    ["POST", "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV", "GET, HEAD"],
    ["GET", "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV/dispute", "POST"],
    ["PATCH", "/v1/account", "GET, HEAD"],
    ["DELETE", "/v1/jobs", "GET, HEAD"],
    ["GET", "/v1/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV", "DELETE"],
  ] as const)("error: %s %s is 405 method_not_allowed with Allow: %s", async (method, path, allow) => {
    const response = await rawRequest(method, path, { apiKey: demoKey() });
    expectErrorBody(response, 405, "method_not_allowed");
    expect(response.headers.allow).toBe(allow);
  });

  it("error: a wrong method on /v1/webhooks lists both of its methods", async () => {
    const response = await rawRequest("PUT", "/v1/webhooks", { apiKey: demoKey() });
    expectErrorBody(response, 405, "method_not_allowed");
    expect(String(response.headers.allow).split(", ").sort()).toEqual(["GET", "HEAD", "POST"]);
  });

  it("error: unknown API paths under /v<n>/ are JSON 404s, whatever the client accepts", async () => {
    for (const path of ["/v2/models", "/v2", "/v99/chat/completions", "/v1/nope"]) {
      for (const accept of ["text/html", "application/json", "*/*"]) {
        const response = await rawRequest("GET", path, { apiKey: demoKey(), headers: { accept } });
        expectErrorBody(response, 404, "route_not_found");
        expect(response.headers["content-type"]).toMatch(/^application\/json/);
      }
    }
  });

  it("GET /v1/jobs/{id} carries that job's x-service-* headers", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const answer = await complete(chatBody(LITE, { max_tokens: 4 }), client.apiKey);
    expect(answer.status, answer.body).toBe(200);
    const settled = await waitForJobStatus(client.apiKey, jobIdOf(answer), "settled");
    const response = await rawRequest("GET", `/v1/jobs/${settled.id}`, { apiKey: client.apiKey });
    expect(response.status).toBe(200);
    const job = response.json<Job>();
    const account = await accountOf(client.wallet);
    expect({
      jobId: response.headers["x-service-job-id"],
      escrowTx: response.headers["x-service-tx-hash"],
      settlementTx: response.headers["x-service-settlement-tx"],
      worker: String(response.headers["x-service-worker"]).toLowerCase(),
      creditsRemaining: response.headers["x-service-credits-remaining"],
    }).toEqual({
      jobId: job.id,
      escrowTx: job.on_chain!.escrow_tx,
      settlementTx: job.on_chain!.settlement_tx,
      worker: job.worker_address?.toLowerCase(),
      creditsRemaining: String(account.available),
    });
    expect(response.headers["x-service-tx-hash"]).toBe(answer.headers["x-service-tx-hash"]);
    expect(response.headers["x-service-settlement-tx"]).toBe(answer.headers["x-service-settlement-tx"]);
  });
});

/** One request written on its own socket, read until the server closes it (or `timeoutMs`). */
function exchangeUntilClose(head: string, body = "", timeoutMs = 30_000): Promise<{ text: string; closed: boolean }> {
  const url = new URL(stackInfo().apiUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(head + body));
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on("error", reject);
  });
}

function postHead(path: string, apiKey: string, body: string, extra = ""): string {
  const { host } = new URL(stackInfo().apiUrl);
  return (
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n`
  );
}

describe("fuzzer findings after issue 11: protocol answers, closing streams, bounds the document states", () => {
  it("a stream asked with Connection: close ends with the connection closed (RFC 9112 §9.6), a replay too", async () => {
    const body = JSON.stringify(chatBody(LITE, { max_tokens: 4, stream: true }));
    const idempotency = `Idempotency-Key: close-${Date.now()}\r\n`;
    for (const attempt of ["first", "replay"]) {
      const { text, closed } = await exchangeUntilClose(
        postHead("/v1/chat/completions", demoKey(), body, idempotency),
        body,
      );
      expect(text, attempt).toMatch(/^HTTP\/1\.1 200/);
      expect(text, attempt).toContain("data: [DONE]");
      expect(text.split("\r\n\r\n")[0]!.toLowerCase(), attempt).not.toContain("connection: keep-alive");
      expect(closed, `${attempt}: the server kept the connection open`).toBe(true);
    }
  });

  it("error: a body nested deeper than 32 levels is invalid_request, refused before it is parsed", async () => {
    const body = `${"[".repeat(26_459)}1${"]".repeat(26_459)}`;
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: demoKey(), body });
    expectErrorBody(response, 400, "invalid_request", { param: null });
  });

  it("error: an Expect other than 100-continue is 417 expectation_failed in the spec's format", async () => {
    const response = await rawRequest("GET", "/v1/models", { apiKey: demoKey(), headers: { expect: "teapot" } });
    expectErrorBody(response, 417, "expectation_failed", { param: null });
  });

  it("error: CONNECT is answered 405 method_not_allowed with Allow, not a dropped connection", async () => {
    const { host } = new URL(stackInfo().apiUrl);
    const { text } = await exchangeUntilClose(`CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 405/);
    expect(text.toLowerCase()).toContain("\r\nallow: get, head, post, delete\r\n");
    expect(text).toContain('"code":"method_not_allowed"');
  });

  it("the job-list model filter takes 1–64 characters as the document states: empty is refused, 64 CJK match nothing", async () => {
    expectErrorBody(await rawRequest("GET", "/v1/jobs?model=", { apiKey: demoKey() }), 400, "invalid_request", {
      param: "model",
    });
    const long = encodeURIComponent("字".repeat(64));
    const page = await rawRequest("GET", `/v1/jobs?model=${long}`, { apiKey: demoKey() });
    expect(page.status, page.body).toBe(200);
    expect(page.json<{ data: unknown[] }>().data).toEqual([]);
    const tooLong = encodeURIComponent("m".repeat(65));
    expectErrorBody(
      await rawRequest("GET", `/v1/jobs?model=${tooLong}`, { apiKey: demoKey() }),
      400,
      "invalid_request",
      {
        param: "model",
      },
    );
  });

  it("a webhook's secret: null is the same as absent: the secret is generated", async () => {
    const owner = await createClientWallet({ usdg: 0n });
    const response = await rawRequest("POST", "/v1/webhooks", {
      apiKey: owner.apiKey,
      body: { url: "https://receiver.invalid/hook", events: ["job.completed"], secret: null },
    });
    expect(response.status, response.body).toBe(201);
    expect(response.json<{ secret?: string }>().secret).toMatch(/^whsec_/);
  });
});
