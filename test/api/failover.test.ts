import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, rawRequest, sseData } from "../support/api.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker, waitUntilModelHasWorkers } from "../support/workers.js";
import type { RunningWorker } from "../../scripts/stack/startWorkers.js";

describe("failover between workers", () => {
  let client: ClientWallet;
  let modelId: string;
  let healthy: RunningWorker;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    modelId = await claimCatalogModel("failover", { tier: "lite" });
    await startExtraWorker({ models: [modelId], fault: "fail_before_first_token" }, client.apiKey);
    healthy = await startExtraWorker({ models: [modelId] }, client.apiKey);
    await waitUntilModelHasWorkers(modelId, client.apiKey, 2);
  });

  it("a worker failing before its first token is replaced by a healthy one: every request succeeds", async () => {
    // Several requests, so the router certainly picks the failing worker for some of them first.
    for (let i = 0; i < 6; i++) {
      const response = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: client.apiKey,
        body: chatBody(modelId, { messages: [{ role: "user", content: `request ${i}` }] }),
      });
      expect(response.status, response.body).toBe(200);
      expect(String(response.headers["x-service-worker"]).toLowerCase()).toBe(healthy.address.toLowerCase());
      expect(response.json<{ choices: { finish_reason: string }[] }>().choices[0]!.finish_reason).toBe("stop");
    }
  });

  it("a streamed request fails over too, before any token reaches the client", async () => {
    for (let i = 0; i < 4; i++) {
      const response = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: client.apiKey,
        body: chatBody(modelId, { stream: true, messages: [{ role: "user", content: `stream ${i}` }] }),
      });
      expect(response.status).toBe(200);
      expect(String(response.headers["x-service-worker"]).toLowerCase()).toBe(healthy.address.toLowerCase());
      expect(sseData(response.body).at(-1)).toBe("[DONE]");
    }
  });
});
