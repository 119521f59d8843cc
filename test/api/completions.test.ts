import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { JOB_ID_PATTERN, jobIdToBytes32 } from "@credit-metered/client";
import { openaiFor, rawRequest, sseData, waitForJobStatus, chatBody } from "../support/api.js";
import { contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";

const MODEL = "llama-3.2-3b-instruct";
const TX_HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const messages = [{ role: "user" as const, content: "Tell me about escrow." }];

type Chunk = {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
};

function chunksOf(body: string): { chunks: Chunk[]; last: string } {
  const data = sseData(body);
  return { chunks: data.slice(0, -1).map((payload) => JSON.parse(payload) as Chunk), last: data.at(-1)! };
}

describe("POST /v1/chat/completions (non-streaming)", () => {
  it("returns a chat.completion whose id is chatcmpl- plus the job id, with usage and finish_reason stop", async () => {
    const openai = openaiFor(stackInfo().demo.apiKey);
    const { data, response } = await openai.chat.completions.create({ model: MODEL, messages }).withResponse();

    const jobId = response.headers.get("x-service-job-id");
    expect(jobId).toMatch(JOB_ID_PATTERN);
    expect(data.id).toBe(`chatcmpl-${jobId}`);
    expect(data.object).toBe("chat.completion");
    expect(Number.isInteger(data.created)).toBe(true);
    expect(Math.abs(data.created - Date.now() / 1000)).toBeLessThan(60);
    expect(data.model).toBe(MODEL);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]!.index).toBe(0);
    expect(data.choices[0]!.message.role).toBe("assistant");
    expect(data.choices[0]!.message.content?.length).toBeGreaterThan(0);
    expect(data.choices[0]!.finish_reason).toBe("stop");
    const usage = data.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("carries the job id, escrow tx, worker, credits remaining and settlement tx headers", async () => {
    const { demo, workers } = stackInfo();
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: demo.apiKey,
      body: chatBody(MODEL),
    });
    expect(response.status, response.body).toBe(200);
    expect(response.headers["x-service-job-id"]).toMatch(JOB_ID_PATTERN);
    expect(response.headers["x-service-tx-hash"]).toMatch(TX_HASH);
    expect(response.headers["x-service-worker"]).toMatch(ADDRESS);
    const poolAddresses = workers.map((worker) => worker.address.toLowerCase());
    expect(poolAddresses).toContain(String(response.headers["x-service-worker"]).toLowerCase());
    expect(response.headers["x-service-credits-remaining"]).toMatch(/^\d+$/);
    expect(response.headers["x-service-settlement-tx"]).toMatch(TX_HASH);
  });

  it("locks the escrow in the transaction named by x-service-tx-hash, under the job id", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: stackInfo().demo.apiKey,
      body: chatBody(MODEL),
    });
    const jobId = String(response.headers["x-service-job-id"]);
    const receipt = await publicClient().getTransactionReceipt({
      hash: response.headers["x-service-tx-hash"] as `0x${string}`,
    });
    const opened = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobOpened",
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      args: { jobId: jobIdToBytes32(jobId) },
    });
    expect(opened).toHaveLength(1);
    expect(opened[0]!.args.wallet?.toLowerCase()).toBe(stackInfo().demo.wallet.toLowerCase());
  });

  it("settles the job: the settlement header names the JobSettled transaction with the output's sha256", async () => {
    const { demo } = stackInfo();
    const openai = openaiFor(demo.apiKey);
    const { data, response } = await openai.chat.completions.create({ model: MODEL, messages }).withResponse();
    const jobId = response.headers.get("x-service-job-id")!;
    const settlementTx = response.headers.get("x-service-settlement-tx") as `0x${string}`;
    const receipt = await publicClient().waitForTransactionReceipt({ hash: settlementTx });
    const settled = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobSettled",
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      args: { jobId: jobIdToBytes32(jobId) },
    });
    expect(settled).toHaveLength(1);
    const sha = createHash("sha256")
      .update(data.choices[0]!.message.content ?? "", "utf8")
      .digest("hex");
    expect(settled[0]!.args.outputHash).toBe(`0x${sha}`);
    expect(settled[0]!.args.completionTokens).toBe(data.usage!.completion_tokens);
  });

  it("reports the balance after the request in x-service-credits-remaining", async () => {
    const { demo } = stackInfo();
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: demo.apiKey, body: chatBody(MODEL) });
    const jobId = String(response.headers["x-service-job-id"]);
    await waitForJobStatus(demo.apiKey, jobId, "settled");
    const remaining = Number(response.headers["x-service-credits-remaining"]);
    const account = (await rawRequest("GET", "/v1/account", { apiKey: demo.apiKey })).json<{
      credits_remaining: number;
    }>();
    // Later requests of this file only lower the balance further.
    expect(remaining).toBeGreaterThanOrEqual(account.credits_remaining);
  });

  it("stops at max_tokens with finish_reason length", async () => {
    const openai = openaiFor(stackInfo().demo.apiKey);
    const completion = await openai.chat.completions.create({ model: MODEL, messages, max_tokens: 3 });
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(completion.usage!.completion_tokens).toBe(3);
  });
});

describe("POST /v1/chat/completions (streaming)", () => {
  it("streams SSE chunks: role+content first, content only after, an empty-delta stop chunk, then [DONE]", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: stackInfo().demo.apiKey,
      body: chatBody(MODEL, { stream: true }),
    });
    expect(response.status, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    // Every event is `data: <payload>` followed by a blank line.
    expect(response.body).toMatch(/^(data: [^\n]+\n\n)+$/);
    const { chunks, last } = chunksOf(response.body);
    expect(last).toBe("[DONE]");
    expect(chunks.length).toBeGreaterThanOrEqual(3);

    const jobId = String(response.headers["x-service-job-id"]);
    for (const chunk of chunks) {
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.id).toBe(`chatcmpl-${jobId}`);
      expect(chunk.model).toBe(MODEL);
      expect(chunk.created).toBe(chunks[0]!.created);
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.choices[0]!.index).toBe(0);
    }
    const [first, ...rest] = chunks;
    const final = rest.pop()!;
    expect(first!.choices[0]!.delta.role).toBe("assistant");
    expect(typeof first!.choices[0]!.delta.content).toBe("string");
    expect(first!.choices[0]!.finish_reason).toBeNull();
    for (const chunk of rest) {
      expect(Object.keys(chunk.choices[0]!.delta)).toEqual(["content"]);
      expect(chunk.choices[0]!.finish_reason).toBeNull();
    }
    expect(final.choices[0]!.delta).toEqual({});
    expect(final.choices[0]!.finish_reason).toBe("stop");
  });

  it("announces the settlement transaction as a trailer once the stream has closed", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: stackInfo().demo.apiKey,
      body: chatBody(MODEL, { stream: true }),
    });
    expect(response.headers["x-service-job-id"]).toMatch(JOB_ID_PATTERN);
    expect(response.headers["x-service-tx-hash"]).toMatch(TX_HASH);
    expect(response.headers["x-service-worker"]).toMatch(ADDRESS);
    expect(String(response.headers["trailer"]).toLowerCase()).toContain("x-service-settlement-tx");
    expect(response.trailers["x-service-settlement-tx"]).toMatch(TX_HASH);
  });

  it("ends with finish_reason length when max_tokens cuts the stream", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: stackInfo().demo.apiKey,
      body: chatBody(MODEL, { stream: true, max_tokens: 4 }),
    });
    const { chunks } = chunksOf(response.body);
    const final = chunks.at(-1)!;
    expect(final.choices[0]!.delta).toEqual({});
    expect(final.choices[0]!.finish_reason).toBe("length");
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text.length).toBeGreaterThan(0);
  });

  it("adds a usage chunk with empty choices when stream_options.include_usage is set", async () => {
    const openai = openaiFor(stackInfo().demo.apiKey);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage!.completion_tokens).toBeGreaterThan(0);
    expect(usageChunk.usage!.total_tokens).toBe(usageChunk.usage!.prompt_tokens + usageChunk.usage!.completion_tokens);
    const stopChunk = chunks.at(-2)!;
    expect(stopChunk.choices[0]!.finish_reason).toBe("stop");
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage ?? null).toBeNull();
  });

  it("streams through the official SDK with the same text a non-streaming call of the same seed returns", async () => {
    const openai = openaiFor(stackInfo().demo.apiKey);
    const seed = 4242;
    const stream = await openai.chat.completions.create({ model: MODEL, messages, seed, stream: true });
    let streamed = "";
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
    const whole = await openai.chat.completions.create({ model: MODEL, messages, seed });
    expect(streamed).toBe(whole.choices[0]!.message.content);
  });
});
