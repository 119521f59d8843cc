import { beforeAll, describe, expect, it } from "vitest";
import { JOB_ID_PATTERN, jobIdToBytes32 } from "@credit-metered/client";
import { chatBody, expectErrorBody, rawRequest, sseData, waitForJobStatus } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { TEST_JOB_TIMEOUT_MS } from "../support/testStackOptions.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

describe("job_timeout (504)", () => {
  let client: ClientWallet;
  let modelId: string;
  let slowModel: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 1n });
    modelId = await claimCatalogModel("never-answer", { tier: "standard" });
    slowModel = await claimCatalogModel("slow", { tier: "lite" });
    await startExtraWorker({ models: [modelId], fault: "never_answer" }, client.apiKey);
    // One token a second for 200 tokens: the stream starts, then outlives the job timeout.
    await startExtraWorker(
      { models: [slowModel], ttftMs: 50, tokensPerSecond: 1, minOutputTokens: 200, maxOutputTokens: 200 },
      client.apiKey,
    );
  });

  it("error: a job no worker completes in time is refunded and answered with job_id, credits_refunded, refund_tx", async () => {
    const before = await accountOf(client.wallet);
    const started = Date.now();
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(modelId, { max_tokens: 100 }),
    });
    const elapsed = Date.now() - started;

    const error = expectErrorBody(response, 504, "job_timeout", { type: "timeout_error" });
    expect(elapsed).toBeGreaterThanOrEqual(TEST_JOB_TIMEOUT_MS - 500);
    const jobId = error.details?.job_id as string;
    expect(jobId).toMatch(JOB_ID_PATTERN);
    expect(response.headers["x-service-job-id"]).toBe(jobId);
    // Standard tier, 100 tokens: the escrow was the per-request price, 8 credits.
    expect(error.details?.credits_refunded).toBe(8);
    const refundTx = error.details?.refund_tx as `0x${string}`;
    expect(refundTx).toMatch(/^0x[0-9a-f]{64}$/);

    const receipt = await publicClient().waitForTransactionReceipt({ hash: refundTx });
    expect(receipt.status).toBe("success");
    const [failed, refunded] = await Promise.all(
      (["JobFailed", "JobRefunded"] as const).map((eventName) =>
        publicClient().getContractEvents({
          address: contracts().creditEscrow,
          abi: creditEscrowAbi,
          eventName,
          fromBlock: receipt.blockNumber,
          toBlock: receipt.blockNumber,
          args: { jobId: jobIdToBytes32(jobId) },
        }),
      ),
    );
    expect(failed!.length + refunded!.length).toBe(1);

    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
  });

  it("shows the timed-out job as refunded", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(modelId, { max_tokens: 50 }),
    });
    expect(response.status).toBe(504);
    const jobId = String(response.headers["x-service-job-id"]);
    const job = await waitForJobStatus(client.apiKey, jobId, "refunded");
    expect(job.credits_charged).toBe(0);
    expect(job.on_chain).toBeUndefined();
  });

  it("error: a stream that outlives the job timeout ends with a job_timeout event (refund_tx) and [DONE]", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(slowModel, { stream: true }),
    });
    expect(response.status).toBe(200);
    const events = sseData(response.body);
    expect(events.at(-1)).toBe("[DONE]");
    const error = JSON.parse(events.at(-2)!) as { error: { code: string; details?: Record<string, unknown> } };
    expect(error.error.code).toBe("job_timeout");
    expect(error.error.details?.refund_tx).toMatch(/^0x[0-9a-f]{64}$/);
    await waitForJobStatus(client.apiKey, String(response.headers["x-service-job-id"]), "refunded");
  });
});
