import { encodeChat } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countChatTokens } from "../shared/tokens/countChatTokens.js";
import { authHeaders, doneLine, jobPayload, readJobLines, runJob } from "./testing/jobClient.js";
import type { TimedLine } from "./testing/jobClient.js";
import { startWorkerProcess } from "./testing/startWorkerProcess.js";
import type { WorkerProcess } from "./testing/startWorkerProcess.js";

const PORT = 8792;
let worker: WorkerProcess;

beforeAll(async () => {
  worker = await startWorkerProcess(PORT, { WORKER_MODELS: "qwen3-1.7b", SIM_TTFT_MS: "0" });
});
afterAll(async () => {
  await worker?.stop();
});

/**
 * Generous against the load of a shared test machine; gpt-tokenizer's quadratic `encodeChat`, which the worker
 * counted with before, held the event loop for about 16 s for 120 KB of emoji and minutes for this test's prompt.
 */
const HEALTH_ANSWER_BOUND_MS = 1_000;

describe("prompt token counting (the shared counter, shared/tokens/)", () => {
  it("signs the prompt tokens gpt-tokenizer's encodeChat (gpt-4o framing) gives, for runs without spaces", async () => {
    const messages = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "字".repeat(6_000) + "😀".repeat(3_000) + " and 字😀 mixed".repeat(200) },
    ] as const;
    const { lines } = await runJob(worker.url, jobPayload({ messages, max_tokens: 4 }));
    const promptTokens = encodeChat(messages as never, "gpt-4o").length;
    expect(doneLine(lines).usage.prompt_tokens).toBe(promptTokens);
    expect(doneLine(lines).receipt.promptTokens).toBe(promptTokens);
  });

  it("keeps answering /healthz while it counts a 700 KB emoji and CJK run, and signs its exact count", async () => {
    const messages = [{ role: "user", content: "😀".repeat(100_000) + "字".repeat(100_000) }] as const;
    const job = fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(jobPayload({ messages, max_tokens: 4 })),
    });
    // The stream's headers go out once the prompt is counted: until then, probe the worker one request at a time.
    let counted = false;
    void job.finally(() => (counted = true)).catch(() => undefined);
    const waits: number[] = [];
    while (!counted) {
      const started = performance.now();
      const health = await fetch(`${worker.url}/healthz`);
      expect(health.status).toBe(200);
      await health.body?.cancel();
      if (!counted) waits.push(performance.now() - started);
    }
    const response = await job;
    expect(response.status).toBe(200);
    const lines: TimedLine[] = [];
    for await (const line of readJobLines(response.body!)) lines.push(line);

    // The count yields between slices of a few ms: every probe is answered while it runs (how many fit depends on
    // the machine's speed, so only the bound is asserted; the blocking count held one probe for minutes here).
    expect(waits.length).toBeGreaterThan(0);
    expect(Math.max(...waits)).toBeLessThan(HEALTH_ANSWER_BOUND_MS);
    // gpt-tokenizer itself would take minutes here; the shared counter equals it (its property tests).
    const expected = await countChatTokens(messages);
    expect(doneLine(lines).usage.prompt_tokens).toBe(expected.tokens);
    expect(doneLine(lines).receipt.promptTokens).toBe(expected.tokens);
  });

  it("error: refuses reserved special-token text as invalid_request naming the message", async () => {
    const messages = [
      { role: "user", content: "fine" },
      { role: "user", content: "x <|endoftext|> y" },
    ];
    const response = await fetch(`${worker.url}/v1/jobs`, {
      method: "POST",
      headers: authHeaders(),
      body: JSON.stringify(jobPayload({ messages })),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: "invalid_request", details: { param: "messages.1.content" } },
    });
  });
});
