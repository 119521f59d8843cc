import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { authHeaders, jobPayload, readJobLines } from "./testing/jobClient.js";
import type { TimedLine } from "./testing/jobClient.js";
import { startWorkerProcess, TEST_WORKER_PRIVATE_KEY } from "./testing/startWorkerProcess.js";
import type { WorkerProcess } from "./testing/startWorkerProcess.js";
import { waitFor } from "../scripts/stack/waitFor.js";

const PORT = 8660;
let worker: WorkerProcess;

beforeAll(async () => {
  worker = await startWorkerProcess(PORT, { WORKER_MODELS: "qwen3-1.7b, llama-3.2-3b-instruct", SIM_TTFT_MS: "0" });
});
afterAll(async () => {
  await worker?.stop();
});

function postJob(body: unknown, headers: Record<string, string>) {
  return fetch(`${worker.url}/v1/jobs`, { method: "POST", headers, body: JSON.stringify(body) });
}

describe("GET /healthz", () => {
  it("reports the worker address, served models, backend and in-flight jobs", async () => {
    const response = await fetch(`${worker.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: "ok",
      address: privateKeyToAccount(TEST_WORKER_PRIVATE_KEY).address,
      models: ["qwen3-1.7b", "llama-3.2-3b-instruct"],
      backend: "simulated",
      inflight: 0,
    });
  });
});

describe("GET /readyz", () => {
  it("answers 200 while the worker takes jobs", async () => {
    const response = await fetch(`${worker.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ready: true, inflight: 0 });
  });
});

describe("gateway authentication", () => {
  it("error: refuses a job without a bearer token", async () => {
    const response = await postJob(jobPayload(), { "content-type": "application/json" });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("error: refuses a job with a wrong token", async () => {
    const response = await postJob(jobPayload(), authHeaders("not-the-gateway-token-at-all"));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("error: refuses a token that only differs in its last character", async () => {
    const response = await postJob(jobPayload(), authHeaders("test-gateway-token-012345678X"));
    expect(response.status).toBe(401);
  });

  it("error: refuses a cancel without the token", async () => {
    const response = await fetch(`${worker.url}/v1/jobs/job_01JD0000000000000000000000/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ delivered_tokens: 0 }),
    });
    expect(response.status).toBe(401);
  });
});

describe("POST /v1/jobs validation", () => {
  it("error: names each invalid field of the payload", async () => {
    const response = await postJob(jobPayload({ max_tokens: 0, messages: [] }), authHeaders());
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; details: { issues: { param: string }[] } } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.issues.map((issue) => issue.param).sort()).toEqual(["max_tokens", "messages"]);
  });

  it("error: rejects a body that is not JSON", async () => {
    const response = await fetch(`${worker.url}/v1/jobs`, { method: "POST", headers: authHeaders(), body: "{nope" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
  });

  it("error: rejects a JSON body that is not an object", async () => {
    const response = await fetch(`${worker.url}/v1/jobs`, { method: "POST", headers: authHeaders(), body: "42" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
  });

  it("error: a body that is not declared JSON is not read, and the validation names what is missing", async () => {
    const response = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "text/plain" },
      body: JSON.stringify(jobPayload()),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
  });

  it("error: a body over 4 MiB is payload_too_large, whether its length is declared or streamed", async () => {
    const huge = JSON.stringify(jobPayload({ messages: [{ role: "user", content: "x".repeat(5 * 1024 * 1024) }] }));
    const declared = await fetch(`${worker.url}/v1/jobs`, { method: "POST", headers: authHeaders(), body: huge });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: { code: "payload_too_large" } });
    const bytes = new TextEncoder().encode(huge);
    const streamed = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ error: { code: "payload_too_large" } });
    // The worker is still healthy and takes the next job.
    expect((await postJob(jobPayload(), authHeaders())).status).toBe(200);
  });

  it("error: rejects a job_id_bytes32 that does not encode the job_id", async () => {
    const payload = jobPayload({ job_id_bytes32: `0x${"11".repeat(32)}` });
    const response = await postJob(payload, authHeaders());
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: "invalid_request", details: { param: "job_id_bytes32" } },
    });
  });

  it("error: rejects a model the worker does not serve", async () => {
    const response = await postJob(jobPayload({ model: "gemma-3-27b-it" }), authHeaders());
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "model_not_served" } });
  });
});

// Last in this file: it stops the shared worker.
describe("shutdown on SIGTERM", () => {
  it("finishes the running job, answers 503 to probes and new jobs meanwhile, then exits 0", async () => {
    const response = await postJob(jobPayload(), authHeaders());
    if (!response.body) throw new Error("no body");
    const lines = readJobLines(response.body);
    const seen: TimedLine[] = [];
    while (!seen.some(({ line }) => line.type === "token")) {
      const next = await lines.next();
      if (next.done) throw new Error("the stream ended early");
      seen.push(next.value);
    }

    worker.terminate();
    // The child handles SIGTERM when its event loop gets to it, which on a loaded machine can take longer than any
    // fixed pause: wait until the probe stops answering "ready" (the job is still running, so it must be draining).
    let readiness = await fetch(`${worker.url}/readyz`);
    await waitFor(
      "the worker to stop reporting ready after SIGTERM",
      async () => {
        if (readiness.status !== 200) return true;
        await readiness.body?.cancel();
        readiness = await fetch(`${worker.url}/readyz`);
        return readiness.status !== 200;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ ready: false, reason: "draining" });
    const refused = await postJob(jobPayload(), authHeaders());
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: "worker_draining" } });

    for (let next = await lines.next(); !next.done; next = await lines.next()) seen.push(next.value);
    expect(seen.at(-1)?.line.type).toBe("done");
    expect(await worker.exitCode).toBe(0);
  });
});
