import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { expectErrorBody, rawRequest, waitForJobStatus } from "../support/api.js";
import { arbiterAccount, contracts, disputeManagerAbi, mined, walletClient } from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

describe("a worker slashed for a fraudulent proof", () => {
  let client: ClientWallet;
  let modelId: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    modelId = await claimCatalogModel("slashed", { tier: "lite" });
    await startExtraWorker({ models: [modelId] }, client.apiKey);
  });

  it("gets no more jobs once slashed (whole stake taken, out of the pool), so its model is no longer served", async () => {
    const answer = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model: modelId, messages: [{ role: "user", content: "Say something." }] },
    });
    expect(answer.status, answer.body).toBe(200);
    const jobId = String(answer.headers["x-service-job-id"]);
    await waitForJobStatus(client.apiKey, jobId, "settled");

    const received = `sha256:${createHash("sha256").update("not what the worker sent", "utf8").digest("hex")}`;
    const dispute = await rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
      apiKey: client.apiKey,
      body: { received_output_hash: received },
    });
    expect(dispute.json<{ dispute_opened: boolean }>().dispute_opened, dispute.body).toBe(true);
    await mined(
      await walletClient(arbiterAccount).writeContract({
        address: contracts().disputeManager,
        abi: disputeManagerAbi,
        functionName: "resolveDispute",
        args: [jobIdToBytes32(jobId), true],
      }),
    );

    await waitFor(
      `${modelId} no longer listed`,
      async () => (await rawRequest("GET", `/v1/models/${modelId}`, { apiKey: client.apiKey })).status === 400,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const refused = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model: modelId, messages: [{ role: "user", content: "Anyone there?" }] },
    });
    expectErrorBody(refused, 503, "no_workers_available");
  });
});
