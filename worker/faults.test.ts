import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { recoverJsonReceiptSigner } from "./testing/recoverJsonReceiptSigner.js";
import type { ReceiptJson } from "./issueReceipt.js";
import { authHeaders, doneLine, jobPayload, runJob, TEST_ESCROW, tokenTexts } from "./testing/jobClient.js";
import { startWorkerProcess, TEST_WORKER_PRIVATE_KEY } from "./testing/startWorkerProcess.js";
import type { WorkerProcess } from "./testing/startWorkerProcess.js";

const workerAddress = privateKeyToAccount(TEST_WORKER_PRIVATE_KEY).address;
const escrow = { chainId: TEST_ESCROW.chain_id, escrow: TEST_ESCROW.address } as const;

function sha256Hex(text: string): string {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

const FAULT_PORTS = {
  never_answer: 8663,
  fail_before_first_token: 8664,
  fail_after_first_token: 8665,
  wrong_hash: 8666,
} as const;
type Fault = keyof typeof FAULT_PORTS;
const workers = new Map<Fault, WorkerProcess>();

// One worker process per fault mode, started together to keep the suite quick.
beforeAll(async () => {
  await Promise.all(
    (Object.keys(FAULT_PORTS) as Fault[]).map(async (fault) => {
      const worker = await startWorkerProcess(FAULT_PORTS[fault], {
        WORKER_MODELS: "qwen3-1.7b",
        SIM_FAULT: fault,
        SIM_TTFT_MS: "0",
        SIM_TOKENS_PER_SECOND: "1000",
      });
      workers.set(fault, worker);
    }),
  );
});
afterAll(async () => {
  await Promise.all([...workers.values()].map((worker) => worker.stop()));
});

function workerWithFault(fault: Fault): () => WorkerProcess {
  return () => {
    const worker = workers.get(fault);
    if (!worker) throw new Error(`no worker with fault ${fault}`);
    return worker;
  };
}

async function inflight(url: string): Promise<number> {
  return ((await (await fetch(`${url}/healthz`)).json()) as { inflight: number }).inflight;
}

describe("SIM_FAULT=never_answer", () => {
  const worker = workerWithFault("never_answer");

  it("accepts the connection but never sends a byte of answer", async () => {
    const request = fetch(`${worker().url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(jobPayload()),
      signal: AbortSignal.timeout(700),
    });
    await expect(request).rejects.toThrow(/abort|timeout/i);
  });

  it("frees the job once the gateway gives up", async () => {
    await fetch(`${worker().url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(jobPayload()),
      signal: AbortSignal.timeout(300),
    }).catch(() => undefined);
    // A generous bound: the loop ends as soon as the condition holds; a loaded machine must not fail it.
    const deadline = Date.now() + 10_000;
    while ((await inflight(worker().url)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await inflight(worker().url)).toBe(0);
  });
});

describe("SIM_FAULT=fail_before_first_token", () => {
  const worker = workerWithFault("fail_before_first_token");

  it("acknowledges, then reports backend_error before any token", async () => {
    const { status, lines } = await runJob(worker().url, jobPayload());
    expect(status).toBe(200);
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "error"]);
    expect(lines[1]?.line).toMatchObject({ type: "error", code: "backend_error" });
  });
});

describe("SIM_FAULT=fail_after_first_token", () => {
  const worker = workerWithFault("fail_after_first_token");

  it("acknowledges, sends one token, then reports backend_error without a receipt", async () => {
    const { lines } = await runJob(worker().url, jobPayload());
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "token", "error"]);
    expect(lines[2]?.line).toMatchObject({ type: "error", code: "backend_error" });
  });

  it("still signs a receipt for the delivered token on cancel", async () => {
    const payload = jobPayload();
    const { lines } = await runJob(worker().url, payload);
    const response = await fetch(`${worker().url}/v1/jobs/${String(payload.job_id)}/cancel`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify({ delivered_tokens: 1 }),
    });
    const answer = (await response.json()) as { receipt: ReceiptJson; text: string };
    expect(answer.text).toBe(tokenTexts(lines).join(""));
    expect(answer.receipt.completionTokens).toBe(1);
  });
});

describe("SIM_FAULT=wrong_hash", () => {
  const worker = workerWithFault("wrong_hash");

  it("streams normally but signs a hash that is not sha256 of the streamed text", async () => {
    const { lines } = await runJob(worker().url, jobPayload());
    const done = doneLine(lines);
    expect(done.receipt.outputHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.receipt.outputHash).not.toBe(sha256Hex(tokenTexts(lines).join("")));
  });

  it("signs the wrong hash with its real key, so the fraud is attributable", async () => {
    const { lines } = await runJob(worker().url, jobPayload());
    const done = doneLine(lines);
    expect(await recoverJsonReceiptSigner(escrow, done.receipt, done.signature)).toBe(workerAddress);
  });
});
