import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, expectErrorBody, rawRequest, waitForJobStatus } from "../support/api.js";
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
