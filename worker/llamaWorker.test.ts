import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadLlamaBackend } from "./backends/llama.js";
import type { LlamaBackend } from "./backends/llama.js";
import type { ReceiptJson } from "./issueReceipt.js";
import { writeTinyLlamaWorkerConfig } from "./testing/gguf/tinyLlamaWorkerConfig.js";
import type { TinyLlamaWorkerConfig } from "./testing/gguf/tinyLlamaWorkerConfig.js";
import {
  authHeaders,
  doneLine,
  jobPayload,
  readJobLines,
  runJob,
  TEST_ESCROW,
  tokenTexts,
} from "./testing/jobClient.js";
import type { TimedLine } from "./testing/jobClient.js";
import { recoverJsonReceiptSigner } from "./testing/recoverJsonReceiptSigner.js";
import {
  runWorkerUntilExit,
  startWorkerProcess,
  TEST_WORKER_PRIVATE_KEY,
  WORKER_START_TEST_TIMEOUT_MS,
} from "./testing/startWorkerProcess.js";
import type { WorkerProcess } from "./testing/startWorkerProcess.js";

// The real worker process serving the generated tiny GGUF model with the llama backend (ports 8790-8799).
const PORT = 8790;
const MODEL = "tiny-llama";
const CONTEXT_SIZE = 4096;
const workerAddress = privateKeyToAccount(TEST_WORKER_PRIVATE_KEY).address;
const escrow = { chainId: TEST_ESCROW.chain_id, escrow: TEST_ESCROW.address } as const;

let fixture: TinyLlamaWorkerConfig;
let worker: WorkerProcess;
/** The same model loaded in the test process: its tokenizer is the reference for the worker's counts. */
let reference: LlamaBackend;

function sha256Hex(text: string): string {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

function llamaJob(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return jobPayload({ model: MODEL, max_tokens: 32, seed: 11, ...overrides });
}

beforeAll(async () => {
  fixture = await writeTinyLlamaWorkerConfig(MODEL, { contextSize: CONTEXT_SIZE, parallel: 2 });
  [worker, reference] = await Promise.all([
    startWorkerProcess(PORT, { WORKER_CONFIG: fixture.configPath }),
    loadLlamaBackend(MODEL, {
      backend: "llama",
      modelPath: fixture.modelPath,
      contextSize: CONTEXT_SIZE,
      threads: 1,
      gpu: false,
      parallel: 1,
    }),
  ]);
});

afterAll(async () => {
  await worker?.stop();
  await reference?.dispose();
});

describe("worker with the llama backend", () => {
  it("reports the llama backend for the model in /healthz and in the ack", async () => {
    const health = (await (await fetch(`${worker.url}/healthz`)).json()) as { model_backends: unknown };
    expect(health.model_backends).toEqual({ [MODEL]: "llama" });
    const { lines } = await runJob(worker.url, llamaJob({ max_tokens: 2 }));
    expect(lines[0]?.line).toMatchObject({ type: "ack", backend: "llama", worker: workerAddress });
  });

  it("streams each token as a line as it is generated, then done with a signed receipt", async () => {
    const payload = llamaJob();
    const { status, lines } = await runJob(worker.url, payload);
    expect(status).toBe(200);
    const texts = tokenTexts(lines);
    expect(texts).toHaveLength(32);
    const done = doneLine(lines);
    expect(done.receipt.jobId).toBe(payload.job_id_bytes32);
    expect(await recoverJsonReceiptSigner(escrow, done.receipt, done.signature)).toBe(workerAddress);
  });

  it("puts sha256 of exactly the streamed text in the receipt", async () => {
    const { lines } = await runJob(worker.url, llamaJob());
    expect(doneLine(lines).receipt.outputHash).toBe(sha256Hex(tokenTexts(lines).join("")));
  });

  it("counts prompt and completion tokens with the model's own tokenizer", async () => {
    const payload = llamaJob();
    const { lines } = await runJob(worker.url, payload);
    const text = tokenTexts(lines).join("");
    const done = doneLine(lines);
    const promptTokens = await reference.countPromptTokens(payload.messages as { role: "user"; content: string }[]);
    expect(done.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: reference.countTextTokens(text) });
    expect(done.receipt).toMatchObject({ promptTokens, completionTokens: reference.countTextTokens(text) });
  });

  it("truncates at max_tokens with finish_reason length", async () => {
    const { lines } = await runJob(worker.url, llamaJob({ max_tokens: 7 }));
    expect(tokenTexts(lines)).toHaveLength(7);
    expect(doneLine(lines)).toMatchObject({ finish_reason: "length", usage: { completion_tokens: 7 } });
  });

  it("ends before a stop sequence with finish_reason stop, the sequence left out", async () => {
    const { lines: fullLines } = await runJob(worker.url, llamaJob({ max_tokens: 48 }));
    const full = tokenTexts(fullLines).join("");
    const stop = full.slice(20, 23);
    const { lines } = await runJob(worker.url, llamaJob({ max_tokens: 48, stop: [stop] }));
    const text = tokenTexts(lines).join("");
    expect(text).toBe(full.slice(0, full.indexOf(stop)));
    const done = doneLine(lines);
    expect(done.finish_reason).toBe("stop");
    expect(done.usage.completion_tokens).toBe(reference.countTextTokens(text));
    expect(done.receipt.outputHash).toBe(sha256Hex(text));
  });

  it("generates the same text for the same seed and temperature", async () => {
    const first = await runJob(worker.url, llamaJob({ seed: 5, temperature: 0.7, top_p: 0.9 }));
    const second = await runJob(worker.url, llamaJob({ seed: 5, temperature: 0.7, top_p: 0.9 }));
    expect(tokenTexts(second.lines).join("")).toBe(tokenTexts(first.lines).join(""));
  });

  it("stops generating on cancel and signs a receipt for the delivered prefix", async () => {
    const payload = llamaJob({ max_tokens: 3000 });
    const response = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(payload),
    });
    if (!response.body) throw new Error("no body");
    const reader = readJobLines(response.body);
    const seen: TimedLine[] = [];
    // Manual iteration: leaving a for-await loop would close the stream, which the worker sees as a disconnect.
    while (tokenTexts(seen).length < 4) {
      const next = await reader.next();
      if (next.done) throw new Error("the stream ended early");
      seen.push(next.value);
    }
    const cancel = await fetch(`${worker.url}/v1/jobs/${payload.job_id as string}/cancel`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ delivered_tokens: 4 }),
    });
    expect(cancel.status).toBe(200);
    const answer = (await cancel.json()) as { receipt: ReceiptJson; signature: Hex; text: string };
    const delivered = tokenTexts(seen).slice(0, 4).join("");
    expect(answer.text).toBe(delivered);
    expect(answer.receipt).toMatchObject({ completionTokens: 4, outputHash: sha256Hex(delivered) });
    for await (const line of reader) seen.push(line);
    expect(seen.at(-1)?.line).toMatchObject({ type: "error", code: "cancelled" });
    expect(tokenTexts(seen).length).toBeLessThan(3000);
  });

  it("completes more concurrent jobs than it has context sequences (the rest wait in line)", async () => {
    const results = await Promise.all([1, 2, 3].map(() => runJob(worker.url, llamaJob({ max_tokens: 10 }))));
    for (const { lines } of results) expect(doneLine(lines).finish_reason).toBe("length");
  });
});

describe("llama backend start-up", () => {
  it(
    "error: exits with status 1 naming the model when the GGUF file cannot be loaded",
    async () => {
      const broken = path.join(fixture.directory, "broken.gguf");
      // The GGUF magic and version, then nothing: passes the config check, fails in llama.cpp.
      await writeFile(broken, Buffer.from([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0]));
      const config = path.join(fixture.directory, "broken.json");
      await writeFile(config, JSON.stringify({ models: { broken: { backend: "llama", modelPath: "broken.gguf" } } }));
      const exit = await runWorkerUntilExit({
        WORKER_PRIVATE_KEY: TEST_WORKER_PRIVATE_KEY,
        WORKER_PORT: String(PORT + 1),
        WORKER_GATEWAY_TOKEN: "test-gateway-token-0123456789",
        WORKER_CONFIG: config,
      });
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain(`model broken: cannot load ${broken}`);
    },
    WORKER_START_TEST_TIMEOUT_MS,
  );
});
