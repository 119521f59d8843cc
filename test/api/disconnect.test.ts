import { beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { chatBody, openaiFor, waitForJobStatus } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

// A worker whose every completion is 1,200 tokens long (4 s at 300 tokens/s): long enough to be priced per
// token (standard tier: 8 + ceil((1,200 - 500) × 4 / 1,000) = 11 credits) and to be cut off early.
const FULL_TOKENS = 1_200;
const MAX_TOKENS = 2_000;

describe("client disconnect mid-stream", () => {
  let client: ClientWallet;
  let modelId: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    modelId = await claimCatalogModel("slow", { tier: "standard" });
    await startExtraWorker(
      { models: [modelId], tokensPerSecond: 300, minOutputTokens: FULL_TOKENS, maxOutputTokens: FULL_TOKENS },
      client.apiKey,
    );
  });

  it("a full run of this model is charged for all its tokens (the baseline)", async () => {
    const { data, response } = await openaiFor(client.apiKey)
      .chat.completions.create({
        model: modelId,
        messages: [{ role: "user", content: "baseline" }],
        max_tokens: MAX_TOKENS,
      })
      .withResponse();
    expect(data.usage!.completion_tokens).toBeGreaterThan(1_000);
    const job = await waitForJobStatus(client.apiKey, response.headers.get("x-service-job-id")!, "settled");
    expect(job.credits_charged).toBe(8 + Math.ceil(((data.usage!.completion_tokens - 500) * 4) / 1_000));
  });

  it("settles only the delivered tokens when the client goes away, and refunds the rest of the escrow", async () => {
    const controller = new AbortController();
    const response = await fetch(`${stackInfo().apiUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(chatBody(modelId, { stream: true, max_tokens: MAX_TOKENS })),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const jobId = response.headers.get("x-service-job-id")!;
    const reader = response.body!.getReader();
    let received = "";
    while ((received.match(/"content"/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    controller.abort();

    const job = await waitForJobStatus(client.apiKey, jobId, "settled", 30_000);
    expect(job.usage.completion_tokens).toBeGreaterThanOrEqual(1);
    expect(job.usage.completion_tokens).toBeLessThan(500);

    const settlementTx = job.on_chain!.settlement_tx as `0x${string}`;
    const receipt = await publicClient().getTransactionReceipt({ hash: settlementTx });
    const [settled] = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobSettled",
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      args: { jobId: jobIdToBytes32(jobId) },
    });
    expect(settled!.args.completionTokens).toBe(job.usage.completion_tokens);
    // Escrow for max_tokens 2,000: 8 + ceil(1,500 × 4 / 1,000) = 14; under 500 delivered tokens the charge is 8.
    expect(settled!.args.creditsCharged).toBe(8n);
    expect(settled!.args.creditsRefunded).toBe(6n);
    expect(job.credits_charged).toBe(8);
    expect((await accountOf(client.wallet)).locked).toBe(0n);
  });
});
