import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { recoverJsonReceiptSigner } from "./testing/recoverJsonReceiptSigner.js";
import { authHeaders, doneLine, jobPayload, runJob, TEST_ESCROW, tokenTexts } from "./testing/jobClient.js";
import { startWorkerProcess, TEST_WORKER_PRIVATE_KEY } from "./testing/startWorkerProcess.js";
import type { WorkerProcess } from "./testing/startWorkerProcess.js";

const PORT = 8661;
const workerAddress = privateKeyToAccount(TEST_WORKER_PRIVATE_KEY).address;
const escrow = { chainId: TEST_ESCROW.chain_id, escrow: TEST_ESCROW.address } as const;
let worker: WorkerProcess;

function sha256Hex(text: string): string {
  return `0x${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "worker-stream-"));
  const configPath = join(dir, "worker.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      models: {
        "slow-sim": { backend: "simulated", ttftMs: 100, tokensPerSecond: 40 },
        "long-sim": {
          backend: "simulated",
          ttftMs: 0,
          tokensPerSecond: 20000,
          minOutputTokens: 600,
          maxOutputTokens: 700,
        },
      },
    }),
  );
  worker = await startWorkerProcess(PORT, {
    WORKER_MODELS: "qwen3-1.7b",
    WORKER_CONFIG: configPath,
    SIM_TTFT_MS: "5",
    SIM_TOKENS_PER_SECOND: "2000",
  });
});
afterAll(async () => {
  await worker?.stop();
});

describe("POST /v1/jobs stream", () => {
  it("answers 200 application/x-ndjson: ack first, then tokens, then done", async () => {
    const { status, contentType, lines } = await runJob(worker.url, jobPayload());
    expect(status).toBe(200);
    expect(contentType).toMatch(/^application\/x-ndjson/);
    expect(lines[0]?.line).toEqual({ type: "ack", worker: workerAddress, backend: "simulated" });
    expect(lines.slice(1, -1).every(({ line }) => line.type === "token")).toBe(true);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.at(-1)?.line.type).toBe("done");
  });

  it("labels simulated output: the text begins with [simulated]", async () => {
    const { lines } = await runJob(worker.url, jobPayload());
    expect(tokenTexts(lines).join("")).toMatch(/^\[simulated\] /);
  });

  it("signs the receipt with the worker key for the escrow named in the payload", async () => {
    const { lines } = await runJob(worker.url, jobPayload());
    const done = doneLine(lines);
    expect(await recoverJsonReceiptSigner(escrow, done.receipt, done.signature)).toBe(workerAddress);
  });

  it("error: a receipt checked against another escrow recovers to a different address", async () => {
    const { lines } = await runJob(worker.url, jobPayload());
    const done = doneLine(lines);
    const otherEscrow = { chainId: 1, escrow: escrow.escrow };
    expect(await recoverJsonReceiptSigner(otherEscrow, done.receipt, done.signature)).not.toBe(workerAddress);
  });

  it("puts sha256 of exactly the streamed text in the receipt", async () => {
    const { lines } = await runJob(worker.url, jobPayload());
    expect(doneLine(lines).receipt.outputHash).toBe(sha256Hex(tokenTexts(lines).join("")));
  });

  it("receipts the job's bytes32 id and the same token counts as the done usage", async () => {
    const payload = jobPayload({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    const { lines } = await runJob(worker.url, payload);
    const done = doneLine(lines);
    const completionTokens = tokenTexts(lines).length;
    const promptTokens = encodeChat(payload.messages as never, "gpt-4o").length;
    expect(done.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: completionTokens });
    expect(done.receipt).toMatchObject({ jobId: payload.job_id_bytes32, promptTokens, completionTokens });
  });

  it("stamps finalTokenAt with the unix second of the final token", async () => {
    const before = Math.floor(Date.now() / 1000);
    const { lines } = await runJob(worker.url, jobPayload());
    const after = Math.floor(Date.now() / 1000);
    const { finalTokenAt } = doneLine(lines).receipt;
    expect(finalTokenAt).toBeGreaterThanOrEqual(before);
    expect(finalTokenAt).toBeLessThanOrEqual(after);
  });

  it("ends on its own with finish_reason stop after 20 to 60-odd tokens when max_tokens allows", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ max_tokens: 500 }));
    const done = doneLine(lines);
    expect(done.finish_reason).toBe("stop");
    expect(done.usage.completion_tokens).toBeGreaterThanOrEqual(20);
    expect(done.usage.completion_tokens).toBeLessThan(90);
    expect(tokenTexts(lines).join("")).toMatch(/\.$/);
  });

  it("stops at max_tokens with finish_reason length and exactly max_tokens tokens", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ max_tokens: 7 }));
    const done = doneLine(lines);
    expect(tokenTexts(lines)).toHaveLength(7);
    expect(done.finish_reason).toBe("length");
    expect(done.usage.completion_tokens).toBe(7);
    expect(done.receipt.completionTokens).toBe(7);
  });

  it("ends before the first stop sequence, without emitting it, with finish_reason stop", async () => {
    const base = jobPayload({ seed: 11 });
    const full = tokenTexts((await runJob(worker.url, base)).lines).join("");
    const stopWord = full.split(" ")[5] ?? "";
    const stop = ` ${stopWord}`;
    const { lines } = await runJob(worker.url, { ...base, ...jobPayloadIds(), stop: ["never-in-output", stop] });
    const text = tokenTexts(lines).join("");
    expect(text).toBe(full.slice(0, full.indexOf(stop)));
    expect(text).not.toContain(stop);
    expect(doneLine(lines).finish_reason).toBe("stop");
    expect(doneLine(lines).receipt.outputHash).toBe(sha256Hex(text));
  });

  it("is deterministic: the same model, messages and seed give the same text and hash", async () => {
    const base = jobPayload({ seed: 42 });
    const first = await runJob(worker.url, base);
    const second = await runJob(worker.url, { ...base, ...jobPayloadIds() });
    expect(tokenTexts(second.lines)).toEqual(tokenTexts(first.lines));
    expect(doneLine(second.lines).receipt.outputHash).toBe(doneLine(first.lines).receipt.outputHash);
  });

  it("gives a different text for a different seed", async () => {
    const first = await runJob(worker.url, jobPayload({ seed: 1 }));
    const second = await runJob(worker.url, jobPayload({ seed: 2 }));
    expect(tokenTexts(second.lines).join("")).not.toBe(tokenTexts(first.lines).join(""));
  });

  it("writes each token as it is produced instead of buffering the stream", async () => {
    // slow-sim: 100 ms to the first token, then 40 tokens per second (25 ms apart).
    const { lines } = await runJob(worker.url, jobPayload({ model: "slow-sim", max_tokens: 12 }));
    const tokenTimes = lines.filter(({ line }) => line.type === "token").map(({ at }) => at);
    const ackAt = lines[0]?.at ?? 0;
    expect(tokenTimes).toHaveLength(12);
    expect((tokenTimes[0] ?? 0) - ackAt).toBeGreaterThan(60);
    expect((tokenTimes.at(-1) ?? 0) - (tokenTimes[0] ?? 0)).toBeGreaterThan(11 * 25 * 0.6);
  });

  it("serves configured long completions past 500 tokens", async () => {
    const { lines } = await runJob(worker.url, jobPayload({ model: "long-sim", max_tokens: 2000 }));
    const done = doneLine(lines);
    expect(done.finish_reason).toBe("stop");
    expect(done.usage.completion_tokens).toBeGreaterThanOrEqual(600);
    expect(done.usage.completion_tokens).toBe(tokenTexts(lines).length);
  });

  it("serves the models of WORKER_MODELS and WORKER_CONFIG together", async () => {
    const health = (await (await fetch(`${worker.url}/healthz`)).json()) as { models: string[] };
    expect(health.models.sort()).toEqual(["long-sim", "qwen3-1.7b", "slow-sim"]);
  });
});

describe("POST /v1/jobs whole delivery", () => {
  it("writes the first token on its own line at once and gathers the rest into tokens lines before done", async () => {
    // qwen3-1.7b here: 2,000 tokens per second, so the whole answer comes well within one hold.
    const { lines } = await runJob(worker.url, jobPayload({ delivery: "whole" }));
    expect(lines.map(({ line }) => line.type)).toEqual(["ack", "token", "tokens", "done"]);
    expect(doneLine(lines).usage.completion_tokens).toBe(tokenTexts(lines).length);
  });

  it("gives the same tokens, text hash and token count as stream delivery of the same job", async () => {
    const base = jobPayload({ seed: 7 });
    const streamed = await runJob(worker.url, base);
    const whole = await runJob(worker.url, { ...base, ...jobPayloadIds(), delivery: "whole" });
    expect(tokenTexts(whole.lines)).toEqual(tokenTexts(streamed.lines));
    const [a, b] = [doneLine(streamed.lines).receipt, doneLine(whole.lines).receipt];
    expect([b.outputHash, b.completionTokens, b.promptTokens]).toEqual([
      a.outputHash,
      a.completionTokens,
      a.promptTokens,
    ]);
  });

  it("signs the receipt of a whole delivery with the worker key", async () => {
    const done = doneLine((await runJob(worker.url, jobPayload({ delivery: "whole" }))).lines);
    expect(await recoverJsonReceiptSigner(escrow, done.receipt, done.signature)).toBe(workerAddress);
  });

  it("writes held tokens while a slow answer runs instead of holding them all to the end", async () => {
    // slow-sim: 100 ms to the first token, then 25 ms apart: 24 tokens take about 675 ms, past two holds of 250 ms.
    const { lines } = await runJob(worker.url, jobPayload({ model: "slow-sim", max_tokens: 24, delivery: "whole" }));
    const gathered = lines.filter(({ line }) => line.type === "tokens");
    expect(gathered.length).toBeGreaterThanOrEqual(2);
    expect(tokenTexts(lines)).toHaveLength(24);
  });

  it("error: a delivery the protocol does not name is invalid_request naming delivery", async () => {
    const response = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(jobPayload({ delivery: "batch" })),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message).toMatch(/delivery/);
  });
});

function jobPayloadIds(): { job_id: unknown; job_id_bytes32: unknown } {
  const { job_id, job_id_bytes32 } = jobPayload();
  return { job_id, job_id_bytes32 };
}
