import { jobIdToBytes32 } from "@credit-metered/client";
import type { DisputeResult } from "@credit-metered/client/http";
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody, rawRequest, waitForJobStatus, type Job } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, disputeManagerAbi, publicClient } from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

const HONEST_MODEL = "llama-3.2-3b-instruct";

function sha256Of(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

type DisputeAnswer = DisputeResult;

describe("POST /v1/jobs/{job_id}/dispute", () => {
  let client: ClientWallet;
  /** Settled early, disputed last: its dispute window runs out while the other tests run. */
  let lateJob: Promise<{ job: Job; text: string }>;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    lateJob = settledJob(HONEST_MODEL);
    await lateJob;
  });

  /** A settled job of `model` and the text the client received. */
  async function settledJob(model: string): Promise<{ job: Job; text: string }> {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model, messages: [{ role: "user", content: "Is this what you sent?" }] },
    });
    expect(response.status, response.body).toBe(200);
    const text = response.json<{ choices: { message: { content: string } }[] }>().choices[0]!.message.content;
    const job = await waitForJobStatus(client.apiKey, String(response.headers["x-service-job-id"]), "settled");
    return { job, text };
  }

  function dispute(jobId: string, receivedOutputHash: string) {
    return rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
      apiKey: client.apiKey,
      body: { received_output_hash: receivedOutputHash },
    });
  }

  it("opens a dispute on chain when the client's received hash differs from the worker's proof", async () => {
    const { job, text } = await settledJob(HONEST_MODEL);
    // The client says it received something else than what the worker proved.
    const claimed = sha256Of(`${text} (altered in transit)`);
    const answer = await dispute(job.id, claimed);

    expect(answer.status, answer.body).toBe(200);
    const body = answer.json<DisputeAnswer>();
    expect(body.job_id).toBe(job.id);
    expect(body.dispute_opened).toBe(true);
    expect(body.your_hash).toBe(claimed);
    expect(body.worker_hash).toBe(sha256Of(text));
    expect(body.worker_hash).toBe(job.on_chain!.proof_hash);
    expect(body.arbitration_window_hours).toBe(24);
    expect(body.dispute_tx).toMatch(/^0x[0-9a-f]{64}$/);

    const receipt = await publicClient().waitForTransactionReceipt({ hash: body.dispute_tx as `0x${string}` });
    const opened = await publicClient().getContractEvents({
      address: contracts().disputeManager,
      abi: disputeManagerAbi,
      eventName: "DisputeOpened",
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      args: { jobId: jobIdToBytes32(job.id) },
    });
    expect(opened).toHaveLength(1);
    expect(opened[0]!.args.clientHash).toBe(`0x${claimed.slice("sha256:".length)}`);
    expect(opened[0]!.args.proofHash).toBe(`0x${body.worker_hash.slice("sha256:".length)}`);
    const block = await publicClient().getBlock({ blockNumber: receipt.blockNumber });
    expect(opened[0]!.args.deadline! - block.timestamp).toBe(24n * 3600n);

    await waitForJobStatus(client.apiKey, job.id, "disputed");
  });

  it("error: 409 for a second dispute of a job already disputed", async () => {
    const { job, text } = await settledJob(HONEST_MODEL);
    const claimed = sha256Of(`${text}!`);
    expect((await dispute(job.id, claimed)).status).toBe(200);
    expectErrorBody(await dispute(job.id, claimed), 409, "dispute_already_open");
  });

  it("opens no dispute when the received hash matches the proof", async () => {
    const { job, text } = await settledJob(HONEST_MODEL);
    expect(job.on_chain!.proof_hash).toBe(sha256Of(text));
    const answer = await dispute(job.id, sha256Of(text));

    expect(answer.status, answer.body).toBe(200);
    const body = answer.json<DisputeAnswer>();
    expect(body.job_id).toBe(job.id);
    expect(body.dispute_opened).toBe(false);
    expect(body.dispute_tx ?? null).toBeNull();
    const after = (await rawRequest("GET", `/v1/jobs/${job.id}`, { apiKey: client.apiKey })).json<Job>();
    expect(after.status).toBe("settled");
  });

  it("error: invalid_request for a hash not of the form sha256:<hex>", async () => {
    const { job } = await settledJob(HONEST_MODEL);
    const answer = await dispute(job.id, "md5:abc");
    expectErrorBody(answer, 400, "invalid_request", { param: "received_output_hash" });
  });

  it("error: 404 for a job of another key", async () => {
    const { job, text } = await settledJob(HONEST_MODEL);
    const other = await createClientWallet({ usdg: 0n });
    const answer = await rawRequest("POST", `/v1/jobs/${job.id}/dispute`, {
      apiKey: other.apiKey,
      body: { received_output_hash: sha256Of(text) },
    });
    expectErrorBody(answer, 404, "job_not_found");
  });

  it("error: dispute_window_expired (422) more than 60 seconds after the final output token", async () => {
    const { job, text } = await lateJob;
    // The window runs from the final token: the receipt's finalTokenAt, as settled on chain.
    const settlement = await publicClient().getTransactionReceipt({
      hash: job.on_chain!.settlement_tx as `0x${string}`,
    });
    const [settled] = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobSettled",
      fromBlock: settlement.blockNumber,
      toBlock: settlement.blockNumber,
      args: { jobId: jobIdToBytes32(job.id) },
    });
    const windowEnd = (Number(settled!.args.finalTokenAt) + 60 + 2) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, windowEnd - Date.now())));
    const answer = await dispute(job.id, sha256Of(`${text} (too late)`));
    expectErrorBody(answer, 422, "dispute_window_expired");
    expect((await rawRequest("GET", `/v1/jobs/${job.id}`, { apiKey: client.apiKey })).json<Job>().status).toBe(
      "settled",
    );
  }, 120_000);
});

// A worker that signs a proof for other text than it streamed is caught before settlement, so such a job never
// reaches the chain as settled and there is nothing for the client to dispute: it is failed and not charged.
describe("a worker whose proof does not match the relayed output", () => {
  let client: ClientWallet;
  let cheatingModel: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    cheatingModel = await claimCatalogModel("wrong-hash", { tier: "lite" });
    await startExtraWorker({ models: [cheatingModel], fault: "wrong_hash" }, client.apiKey);
  });

  it("is not paid: the job fails, its escrow goes back on chain and the client is charged nothing", async () => {
    const before = await accountOf(client.wallet);
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model: cheatingModel, messages: [{ role: "user", content: "prove it" }] },
    });
    const error = expectErrorBody(response, 502, "job_failed");
    const jobId = String(response.headers["x-service-job-id"]);
    expect(error.details?.job_id).toBe(jobId);

    const job = await waitForJobStatus(client.apiKey, jobId, "failed");
    expect(job.credits_charged).toBe(0);
    const failed = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobFailed",
      fromBlock: 0n,
      args: { jobId: jobIdToBytes32(jobId) },
    });
    expect(failed).toHaveLength(1);
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
  });
});
