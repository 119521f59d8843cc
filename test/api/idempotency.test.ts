import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, expectErrorBody, rawRequest, sseData, waitForJobStatus } from "../support/api.js";
import { accountOf } from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";

const MODEL = "llama-3.1-8b-instruct";

describe("Idempotency-Key on chat completions", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 2n });
  });

  function send(idempotencyKey: string, body: Record<string, unknown>) {
    return rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body,
      headers: { "idempotency-key": idempotencyKey },
    });
  }

  it("a retry with the same key and body returns the same job and charges once", async () => {
    const before = await accountOf(client.wallet);
    const key = randomUUID();
    const body = chatBody(MODEL, { messages: [{ role: "user", content: "only once" }] });

    const first = await send(key, body);
    expect(first.status, first.body).toBe(200);
    const jobId = String(first.headers["x-service-job-id"]);
    await waitForJobStatus(client.apiKey, jobId, "settled");
    const retry = await send(key, body);

    expect(retry.status).toBe(200);
    expect(retry.headers["x-service-job-id"]).toBe(jobId);
    expect(retry.json<{ id: string }>().id).toBe(first.json<{ id: string }>().id);
    expect(retry.json<{ choices: unknown }>().choices).toEqual(first.json<{ choices: unknown }>().choices);
    const after = await accountOf(client.wallet);
    // One standard-tier job: 8 credits, not 16.
    expect(before.available - after.available).toBe(8n);
    const jobs = (await rawRequest("GET", "/v1/jobs", { apiKey: client.apiKey })).json<{ data: { id: string }[] }>();
    expect(jobs.data.filter((job) => job.id === jobId)).toHaveLength(1);
  });

  it("replays a streamed completion for a retried key as the same SSE text and settlement trailer, without a new job", async () => {
    const key = randomUUID();
    const body = chatBody("llama-3.2-3b-instruct", { stream: true, max_tokens: 12 });
    const first = await send(key, body);
    const again = await send(key, body);
    const textOf = (raw: string) =>
      sseData(raw)
        .filter((data) => data !== "[DONE]")
        .map(
          (data) =>
            (JSON.parse(data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "",
        )
        .join("");
    expect(again.headers["x-service-job-id"]).toBe(first.headers["x-service-job-id"]);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(textOf(again.body)).toBe(textOf(first.body));
    expect(again.trailers["x-service-settlement-tx"]).toBe(first.trailers["x-service-settlement-tx"]);
  });

  it("error: 409 when the same key comes back with a different body", async () => {
    const key = randomUUID();
    const first = await send(key, chatBody(MODEL, { messages: [{ role: "user", content: "first body" }] }));
    expect(first.status, first.body).toBe(200);
    const conflict = await send(key, chatBody(MODEL, { messages: [{ role: "user", content: "another body" }] }));
    expectErrorBody(conflict, 409, "idempotency_key_reused");
    expect(conflict.headers["x-service-job-id"]).toBeUndefined();
  });

  it("requests without the header are independent jobs", async () => {
    const body = chatBody(MODEL, { messages: [{ role: "user", content: "twice" }] });
    const a = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body });
    const b = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body });
    expect(a.headers["x-service-job-id"]).not.toBe(b.headers["x-service-job-id"]);
  });
});
