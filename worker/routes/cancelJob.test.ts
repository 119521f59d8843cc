import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { recoverJsonReceiptSigner } from "../testing/recoverJsonReceiptSigner.js";
import type { ReceiptJson } from "../issueReceipt.js";
import {
  authHeaders,
  doneLine,
  jobPayload,
  readJobLines,
  runJob,
  TEST_ESCROW,
  tokenTexts,
} from "../testing/jobClient.js";
import type { TimedLine } from "../testing/jobClient.js";
import { startWorkerProcess, TEST_WORKER_PRIVATE_KEY } from "../testing/startWorkerProcess.js";
import type { WorkerProcess } from "../testing/startWorkerProcess.js";

const PORT = 8662;
const workerAddress = privateKeyToAccount(TEST_WORKER_PRIVATE_KEY).address;
const escrow = { chainId: TEST_ESCROW.chain_id, escrow: TEST_ESCROW.address } as const;
let worker: WorkerProcess;

type CancelAnswer = { receipt: ReceiptJson; signature: Hex; text: string };

function sha256Hex(text: string): string {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

function cancel(jobId: string, body: unknown): Promise<Response> {
  return fetch(`${worker.url}/v1/jobs/${jobId}/cancel`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify(body),
  });
}

/** Starts a job and reads its stream until `tokens` token lines have arrived. */
async function startJobAndRead(tokens: number, abort?: AbortController) {
  const payload = jobPayload();
  const response = await fetch(`${worker.url}/v1/jobs`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify(payload),
    ...(abort ? { signal: abort.signal } : {}),
  });
  if (!response.body) throw new Error("no body");
  const lines = readJobLines(response.body);
  const seen: TimedLine[] = [];
  // Manual iteration: leaving a for-await loop would close the stream, which the worker sees as a disconnect.
  while (tokenTexts(seen).length < tokens) {
    const next = await lines.next();
    if (next.done) throw new Error("the stream ended early");
    seen.push(next.value);
  }
  return { jobId: payload.job_id as string, lines, seen };
}

async function inflight(): Promise<number> {
  const health = (await (await fetch(`${worker.url}/healthz`)).json()) as { inflight: number };
  return health.inflight;
}

beforeAll(async () => {
  // Long, slow completions (200 tokens at 50 per second) so that a job is still running when it is cancelled.
  worker = await startWorkerProcess(PORT, {
    WORKER_MODELS: "qwen3-1.7b",
    SIM_TTFT_MS: "0",
    SIM_TOKENS_PER_SECOND: "50",
    SIM_MIN_OUTPUT_TOKENS: "200",
    SIM_MAX_OUTPUT_TOKENS: "200",
  });
});
afterAll(async () => {
  await worker?.stop();
});

describe("POST /v1/jobs/{job_id}/cancel", () => {
  it("signs a receipt for exactly the delivered prefix of a running job", async () => {
    const { jobId, seen } = await startJobAndRead(5);
    const response = await cancel(jobId, { delivered_tokens: 3 });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as CancelAnswer;
    const delivered = tokenTexts(seen).slice(0, 3).join("");
    expect(answer.text).toBe(delivered);
    expect(answer.receipt.completionTokens).toBe(3);
    expect(answer.receipt.outputHash).toBe(sha256Hex(delivered));
    expect(await recoverJsonReceiptSigner(escrow, answer.receipt, answer.signature)).toBe(workerAddress);
  });

  it("ends the job's stream with a cancelled error line", async () => {
    const { jobId, lines } = await startJobAndRead(2);
    await cancel(jobId, { delivered_tokens: 2 });
    const rest: TimedLine[] = [];
    for await (const line of lines) rest.push(line);
    expect(rest.at(-1)?.line).toMatchObject({ type: "error", code: "cancelled" });
    // Tokens come every 20 ms and 198 were still due: what slipped out while the cancel travelled (a loaded test
    // machine can hold it for a few hundred ms) is far from the rest.
    expect(tokenTexts(rest).length).toBeLessThan(50);
  });

  it("stops generation: no more tokens are emitted after the cancel", async () => {
    const { jobId } = await startJobAndRead(2);
    await cancel(jobId, { delivered_tokens: 1 });
    const emittedNow = await cancel(jobId, { delivered_tokens: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const emittedLater = await cancel(jobId, { delivered_tokens: 10_000 });
    const now = (await emittedNow.json()) as { error: { details: { emitted_tokens: number } } };
    const later = (await emittedLater.json()) as { error: { details: { emitted_tokens: number } } };
    expect(later.error.details.emitted_tokens).toBe(now.error.details.emitted_tokens);
    expect(await inflight()).toBe(0);
  });

  it("answers for a job that already finished, receipting only the delivered tokens", async () => {
    const payload = jobPayload({ max_tokens: 6 });
    const { lines } = await runJob(worker.url, payload);
    const done = doneLine(lines);
    const response = await cancel(payload.job_id as string, { delivered_tokens: 4 });
    const answer = (await response.json()) as CancelAnswer;
    expect(answer.text).toBe(tokenTexts(lines).slice(0, 4).join(""));
    expect(answer.receipt).toMatchObject({ jobId: payload.job_id_bytes32, completionTokens: 4 });
    expect(answer.receipt.promptTokens).toBe(done.receipt.promptTokens);
    expect(answer.receipt.finalTokenAt).toBeLessThanOrEqual(done.receipt.finalTokenAt);
  });

  it("receipts an empty output when nothing was delivered", async () => {
    const { jobId } = await startJobAndRead(1);
    const answer = (await (await cancel(jobId, { delivered_tokens: 0 })).json()) as CancelAnswer;
    expect(answer.text).toBe("");
    expect(answer.receipt.completionTokens).toBe(0);
    expect(answer.receipt.outputHash).toBe(sha256Hex(""));
  });

  it("error: an unknown job is 404 job_not_found", async () => {
    const response = await cancel("job_01JD0000000000000000000000", { delivered_tokens: 0 });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "job_not_found" } });
  });

  it("error: delivered_tokens beyond what was emitted is 422", async () => {
    const { jobId } = await startJobAndRead(1);
    const response = await cancel(jobId, { delivered_tokens: 5_000 });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: { code: "delivered_tokens_exceed_emitted" } });
  });

  it("error: a body without delivered_tokens is 400 invalid_request", async () => {
    const { jobId } = await startJobAndRead(1);
    const response = await cancel(jobId, {});
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
    await cancel(jobId, { delivered_tokens: 0 });
  });
});

describe("gateway disconnect", () => {
  it("aborts generation when the gateway closes the connection, keeping the job answerable", async () => {
    const abort = new AbortController();
    const { jobId } = await startJobAndRead(2, abort);
    abort.abort();
    // A generous bound: the loop ends as soon as the condition holds; a loaded machine must not fail it.
    const deadline = Date.now() + 10_000;
    while ((await inflight()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await inflight()).toBe(0);
    const answer = (await (await cancel(jobId, { delivered_tokens: 2 })).json()) as CancelAnswer;
    expect(answer.receipt.completionTokens).toBe(2);
  });
});
