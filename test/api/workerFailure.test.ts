import { beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { chatBody, expectErrorBody, rawRequest, sseData, waitForJobStatus } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

async function jobFailedEvents(jobId: string) {
  return publicClient().getContractEvents({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    eventName: "JobFailed",
    fromBlock: 0n,
    args: { jobId: jobIdToBytes32(jobId) },
  });
}

describe("a worker failing after its first token (no failover possible once tokens flowed)", () => {
  let client: ClientWallet;
  let modelId: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 2n });
    modelId = await claimCatalogModel("fail-after-first", { tier: "lite" });
    await startExtraWorker({ models: [modelId], fault: "fail_after_first_token" }, client.apiKey);
  });

  it("error: a non-streaming request answers 502 job_failed with the job headers, the job is failed on chain and nothing is charged", async () => {
    const before = await accountOf(client.wallet);
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(modelId),
    });
    const error = expectErrorBody(response, 502, "job_failed");
    const jobId = String(response.headers["x-service-job-id"]);
    expect(error.details?.job_id).toBe(jobId);
    expect(response.headers["x-service-tx-hash"]).toMatch(/^0x[0-9a-f]{64}$/);

    const job = await waitForJobStatus(client.apiKey, jobId, "failed");
    expect(job.credits_charged).toBe(0);
    expect(job.on_chain).toBeUndefined();
    expect(await jobFailedEvents(jobId)).toHaveLength(1);
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
  });

  it("error: a stream that already started ends with a job_failed event and [DONE] instead of a stop chunk, escrow returned", async () => {
    const before = await accountOf(client.wallet);
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(modelId, { stream: true }),
    });
    expect(response.status).toBe(200);
    const all = sseData(response.body);
    expect(all.at(-1)).toBe("[DONE]");
    const events = all.filter((data) => data !== "[DONE]");
    const first = JSON.parse(events[0]!) as { choices: { delta: { role?: string } }[] };
    expect(first.choices[0]!.delta.role).toBe("assistant");
    const last = JSON.parse(events.at(-1)!) as { error?: { code: string; message: string } };
    expect(last.error?.code).toBe("job_failed");
    expect(response.body).not.toContain('"finish_reason":"stop"');

    const jobId = String(response.headers["x-service-job-id"]);
    await waitForJobStatus(client.apiKey, jobId, "failed");
    expect(await jobFailedEvents(jobId)).toHaveLength(1);
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
  });
});
