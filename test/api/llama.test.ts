import { createHash } from "node:crypto";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32 } from "@credit-metered/client";
import { findFreePort } from "../../scripts/stack/ports.js";
import { registerWorker } from "../../scripts/registerWorker.js";
import { loadLlamaBackend } from "../../worker/backends/llama.js";
import type { LlamaBackend } from "../../worker/backends/llama.js";
import { writeTinyLlamaWorkerConfig } from "../../worker/testing/gguf/tinyLlamaWorkerConfig.js";
import { startWorkerProcess } from "../../worker/testing/startWorkerProcess.js";
import type { WorkerProcess } from "../../worker/testing/startWorkerProcess.js";
import { openaiFor, waitForJobStatus } from "../support/api.js";
import { contracts, creditEscrowAbi, freshAccount, publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { EXTRA_PORTS } from "../support/testStackOptions.js";
import { claimCatalogModel, waitUntilModelHasWorkers } from "../support/workers.js";

// A catalog model served by a worker running the llama backend on a generated tiny GGUF model (random weights:
// gibberish text, real tokenizer, real llama.cpp generation), end to end: SDK → gateway → worker → chain.
const CONTEXT_SIZE = 2048;
const MODEL = await claimCatalogModel("llama", { contextWindow: CONTEXT_SIZE });
const messages = [
  { role: "system" as const, content: "You are a tiny model." },
  { role: "user" as const, content: "Tell me about escrow." },
];

let worker: WorkerProcess;
let workerAddress: Hex;
/** The same model file loaded in the test: its tokenizer is the reference for every count. */
let reference: LlamaBackend;

function sha256Hex(text: string): string {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

async function settledEvent(jobId: string) {
  const job = await waitForJobStatus(stackInfo().demo.apiKey, jobId, "settled");
  const receipt = await publicClient().waitForTransactionReceipt({ hash: job.on_chain!.settlement_tx as Hex });
  const events = await publicClient().getContractEvents({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    eventName: "JobSettled",
    fromBlock: receipt.blockNumber,
    toBlock: receipt.blockNumber,
    args: { jobId: jobIdToBytes32(jobId) },
  });
  expect(events).toHaveLength(1);
  return events[0]!.args;
}

/** Streams a completion through the official SDK; returns the chunks' text, finish reason, usage and job id. */
async function streamCompletion(extra: { max_tokens: number; stop?: string[]; seed?: number }) {
  const openai = openaiFor(stackInfo().demo.apiKey);
  const { data: stream, response } = await openai.chat.completions
    .create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true }, ...extra })
    .withResponse();
  const deltas: string[] = [];
  let finishReason: string | null = null;
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta.content) deltas.push(choice.delta.content);
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  return {
    deltas,
    text: deltas.join(""),
    finishReason,
    usage: usage!,
    jobId: response.headers.get("x-service-job-id")!,
  };
}

beforeAll(async () => {
  const info = stackInfo();
  const fixture = await writeTinyLlamaWorkerConfig(MODEL, { contextSize: CONTEXT_SIZE });
  const { account, privateKey } = await freshAccount();
  workerAddress = account.address;
  const port = await findFreePort(EXTRA_PORTS.from, EXTRA_PORTS.to);
  [worker, reference] = await Promise.all([
    startWorkerProcess(port, {
      WORKER_PRIVATE_KEY: privateKey,
      WORKER_GATEWAY_TOKEN: info.gatewayToken,
      WORKER_CONFIG: fixture.configPath,
      WORKER_LOG_LEVEL: "info",
    }),
    loadLlamaBackend(MODEL, {
      backend: "llama",
      modelPath: fixture.modelPath,
      contextSize: CONTEXT_SIZE,
      threads: 1,
      gpu: false,
      parallel: 1,
    }),
  ]);
  await registerWorker({
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    workerPrivateKey: privateKey,
    endpoint: worker.url,
    models: [MODEL],
  });
  await waitUntilModelHasWorkers(MODEL, info.demo.apiKey, 1);
});

afterAll(async () => {
  await worker?.stop();
  await reference?.dispose();
});

describe("a catalog model served by the llama backend", () => {
  it("streams a completion through the official SDK and settles it on chain with the model's token counts", async () => {
    const { deltas, text, finishReason, usage, jobId } = await streamCompletion({ max_tokens: 24, seed: 3 });
    // Shown in the test output: what the random-weight model produced, chunk by chunk.
    console.log(`[llama] ${jobId} streamed ${deltas.length} chunks: ${JSON.stringify(deltas)}`);
    expect(deltas).toHaveLength(24);
    expect(finishReason).toBe("length");
    const promptTokens = await reference.countPromptTokens(messages);
    expect(usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: reference.countTextTokens(text) });

    const settled = await settledEvent(jobId);
    expect(settled.worker?.toLowerCase()).toBe(workerAddress.toLowerCase());
    expect(settled.outputHash).toBe(sha256Hex(text));
    expect(settled.completionTokens).toBe(usage.completion_tokens);
    expect(settled.promptTokens).toBe(promptTokens);
  });

  it("ends at a stop sequence with finish_reason stop and settles what was streamed", async () => {
    const full = await streamCompletion({ max_tokens: 40, seed: 9 });
    const stop = full.text.slice(15, 18);
    const { text, finishReason, usage, jobId } = await streamCompletion({ max_tokens: 40, seed: 9, stop: [stop] });
    expect(text).toBe(full.text.slice(0, full.text.indexOf(stop)));
    expect(finishReason).toBe("stop");
    expect(usage.completion_tokens).toBe(reference.countTextTokens(text));

    const settled = await settledEvent(jobId);
    expect(settled.outputHash).toBe(sha256Hex(text));
    expect(settled.completionTokens).toBe(usage.completion_tokens);
  });
});
