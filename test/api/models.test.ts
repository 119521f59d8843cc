import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { LAUNCH_CATALOG, jobIdToBytes32 } from "@credit-metered/client";
import { expectErrorBody, openaiFor, rawRequest, waitForJobStatus } from "../support/api.js";
import { arbiterAccount, contracts, disputeManagerAbi, mined, walletClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

type Model = {
  id: string;
  object: string;
  created: number;
  owned_by: string;
  service: {
    tier: string;
    credits_per_request: number;
    credits_per_1k_tokens: number;
    active_workers: number;
    median_latency_ms: number;
    parameters: string;
    context_window: number;
    stats_window_hours: number;
    jobs_observed: number;
    p95_time_to_first_token_ms: number | null;
    success_rate: number | null;
    disputes_opened: number;
    disputes_upheld: number;
  };
};

function listModels() {
  return rawRequest("GET", "/v1/models", { apiKey: stackInfo().demo.apiKey });
}

describe("GET /v1/models", () => {
  it("lists every launch model with its service object (tier, prices, workers, latency, size, window)", async () => {
    const response = await listModels();
    expect(response.status).toBe(200);
    const body = response.json<{ object: string; data: Model[] }>();
    expect(body.object).toBe("list");
    for (const entry of LAUNCH_CATALOG) {
      const model = body.data.find((candidate) => candidate.id === entry.id);
      expect(model, entry.id).toBeDefined();
      expect(model!.object).toBe("model");
      expect(Number.isInteger(model!.created)).toBe(true);
      expect(model!.owned_by).toBe(entry.ownedBy);
      expect(model!.service).toEqual({
        tier: entry.tier,
        credits_per_request: entry.creditsPerRequest,
        credits_per_1k_tokens: entry.creditsPer1kTokens,
        active_workers: expect.any(Number) as number,
        median_latency_ms: expect.any(Number) as number,
        parameters: entry.parameters,
        context_window: entry.contextWindow,
        stats_window_hours: 24,
        jobs_observed: expect.any(Number) as number,
        p95_time_to_first_token_ms: model!.service.jobs_observed > 0 ? (expect.any(Number) as number) : null,
        success_rate: model!.service.jobs_observed > 0 ? (expect.any(Number) as number) : null,
        disputes_opened: expect.any(Number) as number,
        disputes_upheld: expect.any(Number) as number,
      });
      // The local pool gives every launch model two workers.
      expect(model!.service.active_workers).toBeGreaterThanOrEqual(2);
      expect(Number.isInteger(model!.service.median_latency_ms)).toBe(true);
    }
  });

  it("the official SDK lists the same models", async () => {
    const ids = [];
    for await (const model of openaiFor(stackInfo().demo.apiKey).models.list()) ids.push(model.id);
    for (const entry of LAUNCH_CATALOG) expect(ids).toContain(entry.id);
  });

  it("leaves out a catalog model no worker hosts", async () => {
    const modelId = await claimCatalogModel("unlisted");
    // Once the index has the new entry, the gateway answers 503 (known, unhosted) instead of model_not_found.
    await waitFor("catalog entry indexed", async () => {
      const response = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: stackInfo().demo.apiKey,
        body: { model: modelId, messages: [{ role: "user", content: "hi" }] },
      });
      return response.status === 503;
    });
    const ids = (await listModels()).json<{ data: Model[] }>().data.map((model) => model.id);
    expect(ids).not.toContain(modelId);
  });
});

describe("GET /v1/models/{model_id}", () => {
  it("returns one model object, the same as in the list", async () => {
    const id = "gemma-3-27b-it";
    const response = await rawRequest("GET", `/v1/models/${id}`, { apiKey: stackInfo().demo.apiKey });
    expect(response.status).toBe(200);
    const model = response.json<Model>();
    expect(model.id).toBe(id);
    expect(model.object).toBe("model");
    expect(model.service.tier).toBe("pro");
    expect(model.service.credits_per_request).toBe(18);
    expect(model.service.context_window).toBe(128_000);
    expect(model.service.parameters).toBe("27B");
  });

  // The spec leaves this route's code open (404 or 400 family): the product answers as chat completions do.
  it("error: model_not_found (400) naming model_id for an unknown model id", async () => {
    const response = await rawRequest("GET", "/v1/models/no-such-model", { apiKey: stackInfo().demo.apiKey });
    expectErrorBody(response, 400, "model_not_found", { param: "model_id" });
  });
});

describe("trust figures in service (GET /v1/models, 24-hour window)", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 10n });
  });

  function complete(model: string) {
    return rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model, messages: [{ role: "user", content: "How reliable are you?" }] },
    });
  }

  /** The model's `service` once `ready` holds (figures are cached for up to 5 s). */
  async function serviceOnceReady(model: string, ready: (service: Model["service"]) => boolean) {
    let service: Model["service"] | undefined;
    await waitFor(
      `${model} trust figures`,
      async () => {
        const response = await rawRequest("GET", `/v1/models/${model}`, { apiKey: client.apiKey });
        if (response.status !== 200) return false;
        service = response.json<Model>().service;
        return ready(service);
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    return service!;
  }

  it("a model whose jobs all answered: success rate 1, every job counted, a p95 time to first token", async () => {
    const model = await claimCatalogModel("trusted");
    await startExtraWorker({ models: [model], ttftMs: 30 }, client.apiKey);
    for (let i = 0; i < 3; i++) expect((await complete(model)).status).toBe(200);

    const service = await serviceOnceReady(model, (s) => s.jobs_observed === 3);
    expect(service.stats_window_hours).toBe(24);
    expect(service.success_rate).toBe(1);
    // The simulated worker waits 30 ms before its first token; the gateway adds the escrow lock on top.
    expect(service.p95_time_to_first_token_ms).toBeGreaterThanOrEqual(30);
    expect(service.disputes_opened).toBe(0);
    expect(service.disputes_upheld).toBe(0);
  });

  it("a model whose worker fails mid-answer: its failed jobs count against the success rate", async () => {
    const model = await claimCatalogModel("flaky");
    await startExtraWorker({ models: [model], fault: "fail_after_first_token" }, client.apiKey);
    for (let i = 0; i < 2; i++) expect((await complete(model)).status).toBe(502);

    const service = await serviceOnceReady(model, (s) => s.jobs_observed === 2);
    expect(service.success_rate).toBe(0);
    // Tokens were relayed before the failure, so the first-token time is known.
    expect(service.p95_time_to_first_token_ms).not.toBeNull();
  });

  it("counts the disputes opened on the model's jobs and those the arbiter upheld", async () => {
    const model = await claimCatalogModel("disputed");
    // Two workers: the one slashed by the upheld dispute leaves, the other keeps the model listed.
    await startExtraWorker({ models: [model] }, client.apiKey);
    await startExtraWorker({ models: [model] }, client.apiKey);
    const jobIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await complete(model);
      expect(answer.status, answer.body).toBe(200);
      jobIds.push(String(answer.headers["x-service-job-id"]));
    }
    const received = `sha256:${createHash("sha256").update("not what the worker sent", "utf8").digest("hex")}`;
    for (const jobId of jobIds) {
      await waitForJobStatus(client.apiKey, jobId, "settled");
      const dispute = await rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
        apiKey: client.apiKey,
        body: { received_output_hash: received },
      });
      expect(dispute.json<{ dispute_opened: boolean }>().dispute_opened, dispute.body).toBe(true);
    }
    // The first dispute is rejected, the second upheld.
    for (const [i, jobId] of jobIds.entries()) {
      await mined(
        await walletClient(arbiterAccount).writeContract({
          address: contracts().disputeManager,
          abi: disputeManagerAbi,
          functionName: "resolveDispute",
          args: [jobIdToBytes32(jobId), i === 1],
        }),
      );
    }

    const service = await serviceOnceReady(model, (s) => s.disputes_upheld === 1);
    expect(service.disputes_opened).toBe(2);
    expect(service.jobs_observed).toBe(2);
  });
});
