import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toProofHash } from "@credit-metered/client";
import { localPrivateKey, LOCAL_ACCOUNT_INDEX } from "@credit-metered/client/local";
import { ResponseValidator } from "../../api/openapi/responseValidator.js";
import { MAX_WEBHOOKS_PER_WALLET } from "../../api/webhooks/webhookLimits.js";
import { chatBody, rawRequest, sseData, waitForJobStatus, type RawResponse } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet } from "../support/wallets.js";

// Runs on the API suite's stack (test/support/globalSetup.ts): its tests take seconds, a stack of its own took
// 80 s of CI to start. The gateway there logs at debug level, which the redaction test reads.
const validator = new ResponseValidator();
const MODEL = "qwen3-1.7b";
const WEBHOOK_SECRET = "whsec-test-0123456789abcdef-SECRET";

/** Sends a request and validates its answer against the document (status documented, body matches). */
async function call(
  method: string,
  template: string,
  url: string,
  options: Parameters<typeof rawRequest>[2] = {},
): Promise<RawResponse> {
  const response = await rawRequest(method, url, options);
  const contentType = response.headers["content-type"];
  const body = contentType?.startsWith("application/json") ? response.json() : response.body;
  const problems = validator.check({ method, path: template, status: response.status, contentType, body });
  expect(problems, `${method} ${url} → ${response.status} ${response.body.slice(0, 400)}`).toEqual([]);
  return response;
}

function demoKey(): string {
  return stackInfo().demo.apiKey;
}

describe("the OpenAPI document describes the real responses", () => {
  let settledJobId = "";
  let settledText = "";

  beforeAll(async () => {
    const response = await call("POST", "/v1/chat/completions", "/v1/chat/completions", {
      apiKey: demoKey(),
      body: chatBody(MODEL, { max_tokens: 12 }),
    });
    expect(response.status).toBe(200);
    const completion = response.json<{ id: string; choices: { message: { content: string } }[] }>();
    settledJobId = completion.id.slice("chatcmpl-".length);
    settledText = completion.choices[0]!.message.content;
    await waitForJobStatus(demoKey(), settledJobId, "settled");
  });

  it("is served at /v1/openapi.json without a key, as committed", async () => {
    const response = await call("GET", "/v1/openapi.json", "/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(response.json()).toEqual(JSON.parse(readFileSync("api/openapi/openapi.json", "utf8")));
  });

  it("chat completion: every streamed event matches ChatCompletionChunk", async () => {
    const response = await call("POST", "/v1/chat/completions", "/v1/chat/completions", {
      apiKey: demoKey(),
      body: chatBody(MODEL, { max_tokens: 8, stream: true, stream_options: { include_usage: true } }),
    });
    expect(response.status).toBe(200);
    const events = sseData(response.body);
    expect(events.at(-1)).toBe("[DONE]");
    const chunk = validator.schema("ChatCompletionChunk");
    for (const event of events.slice(0, -1)) expect(chunk(JSON.parse(event)), JSON.stringify(chunk.errors)).toBe(true);
  });

  it("chat completion errors: 400, 401, 402, 409, 413", async () => {
    const cases: { body: unknown; apiKey?: string; headers?: Record<string, string>; status: number }[] = [
      { body: { messages: [] }, apiKey: demoKey(), status: 400 },
      { body: chatBody("no-such-model"), apiKey: demoKey(), status: 400 },
      {
        body: { model: MODEL, messages: [{ role: "user", content: "word ".repeat(40_000) }] },
        apiKey: demoKey(),
        status: 400,
      },
      { body: chatBody(MODEL), status: 401 },
      { body: chatBody(MODEL), apiKey: `svc_live_${"x".repeat(32)}`, status: 401 },
      {
        body: { model: MODEL, messages: [{ role: "user", content: "x".repeat(1_100_000) }] },
        apiKey: demoKey(),
        status: 413,
      },
    ];
    for (const entry of cases) {
      const response = await call("POST", "/v1/chat/completions", "/v1/chat/completions", entry);
      expect(response.status).toBe(entry.status);
    }
    const broke = await createClientWallet({ usdg: 0n });
    const poor = await call("POST", "/v1/chat/completions", "/v1/chat/completions", {
      apiKey: broke.apiKey,
      body: chatBody(MODEL),
    });
    expect(poor.status).toBe(402);
    const headers = { "idempotency-key": `openapi-${Date.now()}` };
    const first = await call("POST", "/v1/chat/completions", "/v1/chat/completions", {
      apiKey: demoKey(),
      headers,
      body: chatBody(MODEL, { max_tokens: 4 }),
    });
    expect(first.status).toBe(200);
    const reused = await call("POST", "/v1/chat/completions", "/v1/chat/completions", {
      apiKey: demoKey(),
      headers,
      body: chatBody(MODEL, { max_tokens: 5 }),
    });
    expect(reused.status).toBe(409);
  });

  it("models: list, one, unknown", async () => {
    expect((await call("GET", "/v1/models", "/v1/models", { apiKey: demoKey() })).status).toBe(200);
    expect((await call("GET", "/v1/models/{model_id}", `/v1/models/${MODEL}`, { apiKey: demoKey() })).status).toBe(200);
    expect((await call("GET", "/v1/models/{model_id}", "/v1/models/nope", { apiKey: demoKey() })).status).toBe(400);
    expect((await call("GET", "/v1/models", "/v1/models")).status).toBe(401);
  });

  it("jobs: list, bad query, one settled job with on_chain, unknown job", async () => {
    expect((await call("GET", "/v1/jobs", "/v1/jobs?limit=2", { apiKey: demoKey() })).status).toBe(200);
    expect((await call("GET", "/v1/jobs", "/v1/jobs?limit=1000", { apiKey: demoKey() })).status).toBe(400);
    const job = await call("GET", "/v1/jobs/{job_id}", `/v1/jobs/${settledJobId}`, { apiKey: demoKey() });
    expect(job.json<{ on_chain?: unknown }>().on_chain).toBeDefined();
    const missing = await call("GET", "/v1/jobs/{job_id}", "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV", {
      apiKey: demoKey(),
    });
    expect(missing.status).toBe(404);
  });

  it("every keyed endpoint answers 401 without a key", async () => {
    const calls: [string, string, string][] = [
      ["GET", "/v1/models/{model_id}", `/v1/models/${MODEL}`],
      ["GET", "/v1/jobs", "/v1/jobs"],
      ["GET", "/v1/jobs/{job_id}", `/v1/jobs/${settledJobId}`],
      ["POST", "/v1/jobs/{job_id}/dispute", `/v1/jobs/${settledJobId}/dispute`],
      ["GET", "/v1/account", "/v1/account"],
      ["POST", "/v1/webhooks", "/v1/webhooks"],
      ["GET", "/v1/webhooks", "/v1/webhooks"],
      ["DELETE", "/v1/webhooks/{webhook_id}", "/v1/webhooks/wh_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
    ];
    for (const [method, template, url] of calls)
      expect((await call(method, template, url, method === "POST" ? { body: {} } : {})).status).toBe(401);
  });

  it("account", async () => {
    expect((await call("GET", "/v1/account", "/v1/account", { apiKey: demoKey() })).status).toBe(200);
  });

  it("disputes: bad body, unknown job, matching hash, opened, already open", async () => {
    const template = "/v1/jobs/{job_id}/dispute";
    const url = `/v1/jobs/${settledJobId}/dispute`;
    const { createHash } = await import("node:crypto");
    const hash = toProofHash(`0x${createHash("sha256").update(settledText, "utf8").digest("hex")}`);
    expect((await call("POST", template, url, { apiKey: demoKey(), body: {} })).status).toBe(400);
    const unknown = await call("POST", template, "/v1/jobs/job_01ARZ3NDEKTSV4RRFFQ69G5FAV/dispute", {
      apiKey: demoKey(),
      body: { received_output_hash: hash },
    });
    expect(unknown.status).toBe(404);
    const same = await call("POST", template, url, { apiKey: demoKey(), body: { received_output_hash: hash } });
    expect(same.json<{ dispute_opened: boolean }>().dispute_opened).toBe(false);
    const other = { received_output_hash: `sha256:${"ab".repeat(32)}` };
    const opened = await call("POST", template, url, { apiKey: demoKey(), body: other });
    expect(opened.json<{ dispute_opened: boolean }>().dispute_opened).toBe(true);
    expect((await call("POST", template, url, { apiKey: demoKey(), body: other })).status).toBe(409);
  });

  it("webhooks: create (chosen and generated secret), bad url, list, delete, unknown", async () => {
    const created = await call("POST", "/v1/webhooks", "/v1/webhooks", {
      apiKey: demoKey(),
      body: { url: "https://127.0.0.1:9/hook", events: ["job.completed"], secret: WEBHOOK_SECRET },
    });
    expect(created.status).toBe(201);
    const generated = await call("POST", "/v1/webhooks", "/v1/webhooks", {
      apiKey: demoKey(),
      body: { url: "https://127.0.0.1:9/other", events: ["credit.low"] },
    });
    expect(generated.status).toBe(201);
    const bad = await call("POST", "/v1/webhooks", "/v1/webhooks", {
      apiKey: demoKey(),
      body: { url: "ftp://x", events: ["job.completed"] },
    });
    expect(bad.status).toBe(400);
    expect((await call("GET", "/v1/webhooks", "/v1/webhooks", { apiKey: demoKey() })).status).toBe(200);
    // The list is paginated like the jobs; a bracketed query parameter is refused.
    const page = await call("GET", "/v1/webhooks", "/v1/webhooks?limit=1", { apiKey: demoKey() });
    expect(page.json<{ has_more: boolean; next_cursor: string | null }>()).toMatchObject({ has_more: true });
    const before = page.json<{ next_cursor: string }>().next_cursor;
    expect(
      (await call("GET", "/v1/webhooks", `/v1/webhooks?limit=1&before=${before}`, { apiKey: demoKey() })).status,
    ).toBe(200);
    expect((await call("GET", "/v1/webhooks", "/v1/webhooks?status[]=failed", { apiKey: demoKey() })).status).toBe(400);
    // The cap per wallet: fill it, the next one is 409 webhook_limit_reached, then take the extra ones back.
    const all = await call("GET", "/v1/webhooks", "/v1/webhooks?limit=100", { apiKey: demoKey() });
    const extra: string[] = [];
    for (let n = all.json<{ data: unknown[] }>().data.length; n < MAX_WEBHOOKS_PER_WALLET; n++) {
      const filler = await call("POST", "/v1/webhooks", "/v1/webhooks", {
        apiKey: demoKey(),
        body: { url: `https://127.0.0.1:9/filler/${n}`, events: ["worker.slashed"] },
      });
      extra.push(filler.json<{ id: string }>().id);
    }
    const over = await call("POST", "/v1/webhooks", "/v1/webhooks", {
      apiKey: demoKey(),
      body: { url: "https://127.0.0.1:9/one-too-many", events: ["worker.slashed"] },
    });
    expect(over.status).toBe(409);
    for (const extraId of extra)
      expect(
        (await call("DELETE", "/v1/webhooks/{webhook_id}", `/v1/webhooks/${extraId}`, { apiKey: demoKey() })).status,
      ).toBe(200);
    const id = created.json<{ id: string }>().id;
    const template = "/v1/webhooks/{webhook_id}";
    // Both go, so no later test of the suite meets their failing deliveries to port 9.
    const generatedId = generated.json<{ id: string }>().id;
    expect((await call("DELETE", template, `/v1/webhooks/${generatedId}`, { apiKey: demoKey() })).status).toBe(200);
    expect((await call("DELETE", template, `/v1/webhooks/${id}`, { apiKey: demoKey() })).status).toBe(200);
    expect((await call("DELETE", template, `/v1/webhooks/${id}`, { apiKey: demoKey() })).status).toBe(404);
  });

  afterAll(() => {
    const declared = validator.declared();
    const untested = declared.filter((entry) => !validator.seen.has(entry));
    console.log(`validated ${validator.seen.size} of ${declared.length} documented responses; not produced here:`);
    console.log(untested.map((entry) => `  ${entry}`).join("\n"));
  });
});

describe("operations", () => {
  it("the gateway answers /healthz and /readyz", async () => {
    expect((await rawRequest("GET", "/healthz")).status).toBe(200);
    const ready = await rawRequest("GET", "/readyz");
    expect(ready.status, ready.body).toBe(200);
  });

  it("the indexer answers Ponder's /health and /ready", async () => {
    expect((await fetch(`${stackInfo().indexerUrl}/health`)).status).toBe(200);
    expect((await fetch(`${stackInfo().indexerUrl}/ready`)).status).toBe(200);
  });

  it("each worker answers /healthz, /readyz and /metrics", async () => {
    for (const worker of stackInfo().workers) {
      expect((await fetch(`${worker.endpoint}/healthz`)).status).toBe(200);
      expect((await fetch(`${worker.endpoint}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${worker.endpoint}/metrics`)).text();
      expect(metrics).toContain("worker_inflight_jobs");
      expect(metrics).toContain("process_resident_memory_bytes");
    }
    const served = await Promise.all(
      stackInfo().workers.map(async (worker) => (await fetch(`${worker.endpoint}/metrics`)).text()),
    );
    expect(served.some((text) => /worker_jobs_total\{model="qwen3-1\.7b",outcome="done"\} [1-9]/.test(text))).toBe(
      true,
    );
  });

  it("the gateway's /metrics counts requests by route and code and observes TTFT, settlement and workers", async () => {
    const response = await rawRequest("GET", "/metrics");
    expect(response.status).toBe(200);
    const text = response.body;
    expect(text).toMatch(
      /gateway_http_requests_total\{route="\/v1\/chat\/completions",method="POST",code="200"\} [1-9]/,
    );
    expect(text).toMatch(
      /gateway_http_requests_total\{route="\/v1\/chat\/completions",method="POST",code="401"\} [1-9]/,
    );
    expect(text).toMatch(/gateway_http_requests_total\{route="\/v1\/jobs\/\{job_id\}",method="GET",code="404"\} [1-9]/);
    expect(text).toMatch(/gateway_time_to_first_token_seconds_count\{model="qwen3-1\.7b"\} [1-9]/);
    expect(text).toMatch(/gateway_settlement_lag_seconds_count [1-9]/);
    expect(text).toMatch(/gateway_settlement_batch_size_count [1-9]/);
    expect(text).toMatch(/gateway_open_escrows\{status="pending"\} \d/);
    expect(text).toMatch(/gateway_webhook_backlog \d/);
    expect(text).toMatch(/gateway_webhook_delivery_failures_total \d/);
    for (const worker of stackInfo().workers) {
      const line = `gateway_worker_up{worker="${worker.address}",endpoint="${worker.endpoint}"} 1`;
      expect(text.toLowerCase()).toContain(line.toLowerCase());
    }
    expect(text).toContain("process_resident_memory_bytes");
  });

  it("the gateway's log is JSON with request ids and never holds a key or secret", async () => {
    const log = readFileSync(path.join(stackInfo().stateDir, "logs", "gateway.log"), "utf8");
    const lines = log.split("\n").filter((line) => line.startsWith("{"));
    expect(lines.length).toBeGreaterThan(10);
    const requests = lines.map((line) => JSON.parse(line) as { request_id?: string; req?: unknown });
    expect(requests.some((entry) => entry.req !== undefined && entry.request_id?.startsWith("req_"))).toBe(true);
    expect(log).not.toContain(demoKey());
    expect(log).not.toContain(WEBHOOK_SECRET);
    expect(log).not.toContain(stackInfo().gatewayToken);
    expect(log.toLowerCase()).not.toContain(localPrivateKey(LOCAL_ACCOUNT_INDEX.gateway).slice(2).toLowerCase());
  });
});
