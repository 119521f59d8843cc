// Gateway behaviours the shared end-to-end suite (test/api) does not cover, against a running stack:
// `npx tsx api/testing/devStack.ts` then `npx vitest run --config api/testing/vitest.e2e.config.ts api/testing`.
import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, expectErrorBody, rawRequest, sseData, waitForJobStatus } from "../../test/support/api.js";
import { accountOf } from "../../test/support/chain.js";
import { createClientWallet, type ClientWallet } from "../../test/support/wallets.js";
import { addCatalogModel, startExtraWorker, uniqueModelId } from "../../test/support/workers.js";

type ErrorEvent = { error: { code: string; details?: Record<string, unknown> } };

describe("gateway edge cases", () => {
  let client: ClientWallet;
  let brokenModel: string;
  let slowModel: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    brokenModel = uniqueModelId("fail-mid");
    slowModel = uniqueModelId("slow");
    await addCatalogModel(brokenModel, { tier: "lite" });
    await addCatalogModel(slowModel, { tier: "lite" });
    await startExtraWorker({ models: [brokenModel], fault: "fail_after_first_token" }, client.apiKey);
    await startExtraWorker(
      { models: [slowModel], ttftMs: 50, tokensPerSecond: 1, minOutputTokens: 200, maxOutputTokens: 200 },
      client.apiKey,
    );
  });

  it("error: a worker failing mid-stream ends the SSE stream with a job_failed event and [DONE], escrow returned", async () => {
    const before = await accountOf(client.wallet);
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(brokenModel, { stream: true }),
    });
    expect(response.status).toBe(200);
    const events = sseData(response.body);
    expect(events.at(-1)).toBe("[DONE]");
    const error = JSON.parse(events.at(-2)!) as ErrorEvent;
    expect(error.error.code).toBe("job_failed");
    await waitForJobStatus(client.apiKey, String(response.headers["x-service-job-id"]), "failed");
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
  });

  it("error: a worker failing mid-way through a whole completion answers 502 job_failed with the job headers", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(brokenModel),
    });
    const error = expectErrorBody(response, 502, "job_failed");
    expect(response.headers["x-service-job-id"]).toBe(error.details?.job_id);
    expect(response.headers["x-service-tx-hash"]).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("error: a stream that outlives the job timeout ends with a job_timeout event (refund_tx) and [DONE]", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(slowModel, { stream: true }),
    });
    expect(response.status).toBe(200);
    const events = sseData(response.body);
    expect(events.at(-1)).toBe("[DONE]");
    const error = JSON.parse(events.at(-2)!) as ErrorEvent;
    expect(error.error.code).toBe("job_timeout");
    expect(error.error.details?.refund_tx).toMatch(/^0x[0-9a-f]{64}$/);
    await waitForJobStatus(client.apiKey, String(response.headers["x-service-job-id"]), "refunded");
  }, 60_000);

  it("replays a streamed completion for a retried Idempotency-Key as the same SSE text, without a new job", async () => {
    const headers = { "idempotency-key": `edge-${Date.now()}` };
    const body = chatBody("llama-3.2-3b-instruct", { stream: true, max_tokens: 12 });
    const first = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body, headers });
    const again = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body, headers });
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
});
