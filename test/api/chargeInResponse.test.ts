import type { CompletionUsage } from "@credit-metered/client/http";
import { execFileSync } from "node:child_process";
import http from "node:http";
import { createOpenAICompatible, type MetadataExtractor } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, streamText } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, openaiFor, waitForJobStatus, type Job } from "../support/api.js";
import { accountOf } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";

// The charge in the response (api/README.md "The charge in the response"): `usage.cost` and `usage.service` on
// a whole completion and on the `stream_options.include_usage` chunk, read through three unmodified SDKs.

const MODEL = "llama-3.2-3b-instruct";
const TX_HASH = /^0x[0-9a-f]{64}$/;
const messages = [{ role: "user" as const, content: "What does the escrow hold?" }];

type ServiceCharge = CompletionUsage["service"];
/** `usage` as the SDKs hand it over (their types leave out the charge). */
type ChargedUsage = Omit<CompletionUsage, "total_tokens">;

/**
 * Checks a charge object against the chain's facts: the job resource once settled (charge, escrow, settlement,
 * worker) and the escrow's balance of the wallet, which only this test file spends from.
 */
async function expectChargeMatchesChain(client: ClientWallet, usage: ChargedUsage): Promise<Job> {
  const { cost, service } = usage;
  expect(cost).toBe(service.credits_charged);
  expect(service.usdg_value).toBe(service.credits_charged / 100);
  const job = await waitForJobStatus(client.apiKey, service.job_id, "settled");
  expect(service.credits_charged).toBe(job.credits_charged);
  expect(service.credits_charged).toBeGreaterThan(0);
  expect(service.escrow_tx).toBe(job.on_chain!.escrow_tx);
  expect(service.worker_address.toLowerCase()).toBe(job.worker_address?.toLowerCase());
  if (service.settlement_tx !== null) expect(service.settlement_tx).toBe(job.on_chain!.settlement_tx);
  const balance = await accountOf(client.wallet);
  expect(balance.locked).toBe(0n);
  expect(service.credits_remaining).toBe(Number(balance.available));
  return job;
}

/** The AI SDK's documented hook for provider extensions: copies `usage.service` into `providerMetadata`. */
const serviceChargeExtractor: MetadataExtractor = {
  extractMetadata: async ({ parsedBody }) => {
    const service = (parsedBody as { usage?: { service?: ServiceCharge } }).usage?.service;
    return service ? { service: { ...service } } : undefined;
  },
  createStreamExtractor: () => {
    let service: ServiceCharge | undefined;
    return {
      processChunk(chunk) {
        service = (chunk as { usage?: { service?: ServiceCharge } | null }).usage?.service ?? service;
      },
      buildMetadata: () => (service ? { service: { ...service } } : undefined),
    };
  },
};

function aiSdkProvider(apiKey: string) {
  return createOpenAICompatible({
    name: "service",
    baseURL: `${stackInfo().apiUrl}/v1`,
    apiKey,
    includeUsage: true,
    metadataExtractor: serviceChargeExtractor,
  });
}

function langchainFor(apiKey: string, streaming: boolean) {
  return new ChatOpenAI({
    model: MODEL,
    apiKey,
    configuration: { baseURL: `${stackInfo().apiUrl}/v1` },
    maxRetries: 0,
    streaming,
  });
}

describe("the charge in the response", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 10n });
  });

  it("openai SDK, whole completion: usage.cost and usage.service carry the charge, balance and both transactions", async () => {
    const { data, response } = await openaiFor(client.apiKey)
      .chat.completions.create({ model: MODEL, messages })
      .withResponse();
    const usage = data.usage as unknown as ChargedUsage;
    expect(usage.service.job_id).toBe(response.headers.get("x-service-job-id"));
    expect(usage.service.escrow_tx).toBe(response.headers.get("x-service-tx-hash"));
    // A whole completion waits for the settlement transaction to be sent (its header), so the body has it too.
    expect(usage.service.settlement_tx).toMatch(TX_HASH);
    expect(usage.service.settlement_tx).toBe(response.headers.get("x-service-settlement-tx"));
    expect(String(usage.service.credits_remaining)).toBe(response.headers.get("x-service-credits-remaining"));
    await expectChargeMatchesChain(client, usage);
  });

  it("openai SDK, stream: the include_usage chunk carries the charge and the escrow transaction", async () => {
    const stream = await openaiFor(client.apiKey).chat.completions.create({
      model: MODEL,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const usageChunks = [];
    for await (const chunk of stream) if (chunk.usage) usageChunks.push(chunk);
    expect(usageChunks).toHaveLength(1);
    expect(usageChunks[0]!.choices).toEqual([]);
    const usage = usageChunks[0]!.usage as unknown as ChargedUsage;
    expect(usage.service.job_id).toBe(usageChunks[0]!.id.replace(/^chatcmpl-/, ""));
    await expectChargeMatchesChain(client, usage);
  });

  it("AI SDK (@ai-sdk/openai-compatible), generateText: the charge reaches providerMetadata", async () => {
    const result = await generateText({ model: aiSdkProvider(client.apiKey)(MODEL), prompt: "Hello", maxRetries: 0 });
    const service = result.providerMetadata?.service as unknown as ServiceCharge;
    expect(service.settlement_tx).toMatch(TX_HASH);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    await expectChargeMatchesChain(client, { ...usageOf(result.usage), cost: service.credits_charged, service });
  });

  it("AI SDK (@ai-sdk/openai-compatible), streamText: the charge reaches providerMetadata", async () => {
    const result = streamText({ model: aiSdkProvider(client.apiKey)(MODEL), prompt: "Hello", maxRetries: 0 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(text.length).toBeGreaterThan(0);
    const service = (await result.providerMetadata)?.service as unknown as ServiceCharge;
    const usage = await result.usage;
    expect(usage.outputTokens).toBeGreaterThan(0);
    await expectChargeMatchesChain(client, { ...usageOf(usage), cost: service.credits_charged, service });
  });

  it("LangChain ChatOpenAI, invoke: the charge is in response_metadata.usage", async () => {
    const message = await langchainFor(client.apiKey, false).invoke("Hello");
    const usage = (message.response_metadata as { usage: ChargedUsage }).usage;
    expect(usage.service.settlement_tx).toMatch(TX_HASH);
    await expectChargeMatchesChain(client, usage);
  });

  it("LangChain ChatOpenAI, stream: the last chunk's response_metadata.usage carries the charge", async () => {
    const stream = await langchainFor(client.apiKey, true).stream("Hello");
    let usage: ChargedUsage | undefined;
    for await (const chunk of stream) {
      const candidate = (chunk.response_metadata as { usage?: Partial<ChargedUsage> }).usage;
      if (candidate?.service) usage = candidate as ChargedUsage;
    }
    expect(usage).toBeDefined();
    await expectChargeMatchesChain(client, usage!);
  });
});

function usageOf(usage: { inputTokens: number | undefined; outputTokens: number | undefined }) {
  return { prompt_tokens: usage.inputTokens ?? 0, completion_tokens: usage.outputTokens ?? 0 };
}

/** The pid of the process listening on a local TCP port (the stack's Hardhat node). */
function pidListeningOn(port: number): number {
  const out = execFileSync("ss", ["-ltnpH", `sport = :${port}`], { encoding: "utf8" });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`no process listens on port ${port}: ${out}`);
  return Number(pid);
}

type StreamEvents = { sawDone: Promise<void>; ended: Promise<{ body: string; trailers: NodeJS.Dict<string> }> };

/** A raw streaming request that reports when `data: [DONE]` arrived and when the response (with trailers) ended. */
function streamWithEvents(apiKey: string, onFirstContent: () => void): StreamEvents {
  let resolveDone!: () => void;
  const sawDone = new Promise<void>((resolve) => (resolveDone = resolve));
  const ended = new Promise<{ body: string; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
    const payload = JSON.stringify(
      chatBody(MODEL, { stream: true, stream_options: { include_usage: true }, max_tokens: 64 }),
    );
    const request = http.request(
      new URL("/v1/chat/completions", stackInfo().apiUrl),
      { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" } },
      (response) => {
        let body = "";
        let sawContent = false;
        response.setEncoding("utf8");
        response.on("data", (text: string) => {
          body += text;
          if (!sawContent && body.includes('"content"')) {
            sawContent = true;
            onFirstContent();
          }
          if (body.includes("data: [DONE]")) resolveDone();
        });
        response.on("end", () => resolve({ body, trailers: response.trailers }));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
  return { sawDone, ended };
}

describe("[DONE] does not wait for the settlement transaction", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 10n });
  });

  it("with the chain node frozen after the first token, [DONE] still arrives; the trailer follows once it resumes", async () => {
    const chainPid = pidListeningOn(stackInfo().ports.rpc);
    let frozen = false;
    const freeze = () => {
      process.kill(chainPid, "SIGSTOP");
      frozen = true;
    };
    try {
      const events = streamWithEvents(client.apiKey, freeze);
      let endedWhileFrozen = false;
      void events.ended.then(() => (endedWhileFrozen = frozen));
      await events.sawDone;
      // The settlement cannot be sent while the node is stopped: the answer ended without it.
      expect(frozen).toBe(true);
      expect(endedWhileFrozen).toBe(false);
      process.kill(chainPid, "SIGCONT");
      frozen = false;
      const { body, trailers } = await events.ended;
      const data = body
        .split("\n\n")
        .filter((block) => block.startsWith("data: "))
        .map((block) => block.slice(6));
      expect(data.at(-1)).toBe("[DONE]");
      const usage = (JSON.parse(data.at(-2)!) as { usage: ChargedUsage }).usage;
      // Not known in time for the usage chunk; the trailer and the job resource have it.
      expect(usage.service.settlement_tx).toBeNull();
      expect(trailers["x-service-settlement-tx"]).toMatch(TX_HASH);
      const job = await expectChargeMatchesChain(client, usage);
      expect(trailers["x-service-settlement-tx"]).toBe(job.on_chain!.settlement_tx);
    } finally {
      if (frozen) process.kill(chainPid, "SIGCONT");
    }
  });
});
