import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinyLlamaGguf } from "../testing/gguf/tinyLlamaModel.js";
import { loadLlamaBackend } from "./llama.js";
import type { LlamaBackend } from "./llama.js";
import { BackendError } from "./types.js";
import type { GenerationOutcome, GenerationRequest } from "./types.js";

// The backend in-process on the generated tiny model (random weights: the text is gibberish, the path is real).
const CONTEXT_SIZE = 256;
let backend: LlamaBackend;

function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    model: "tiny-llama",
    messages: [{ role: "user", content: "Say something." }],
    maxTokens: 24,
    stop: [],
    seed: 42,
    ...overrides,
  };
}

async function generate(
  overrides: Partial<GenerationRequest> = {},
  signal = new AbortController().signal,
): Promise<{ pieces: string[]; text: string; outcome: GenerationOutcome }> {
  const generation = backend.generate(request(overrides), signal);
  const pieces: string[] = [];
  for (;;) {
    const step = await generation.next();
    if (step.done) return { pieces, text: pieces.join(""), outcome: step.value };
    pieces.push(step.value);
  }
}

beforeAll(async () => {
  const directory = await mkdtemp(path.join(tmpdir(), "tiny-llama-"));
  backend = await loadLlamaBackend("tiny-llama", {
    backend: "llama",
    modelPath: await writeTinyLlamaGguf(directory),
    contextSize: CONTEXT_SIZE,
    threads: 1,
    gpu: false,
    parallel: 1,
  });
});

afterAll(async () => {
  await backend?.dispose();
});

describe("llama backend", () => {
  it("loads the generated GGUF with the context size it was given", () => {
    expect(backend.kind).toBe("llama");
    expect(backend.contextSize).toBe(CONTEXT_SIZE);
  });

  it("counts prompt tokens with the model's tokenizer inside the model's chat template", async () => {
    const empty = await backend.countPromptTokens([{ role: "user", content: "" }]);
    expect(empty).toBeGreaterThan(0);
    // The byte-level vocabulary: one token per ASCII character, two byte tokens for "é".
    expect(await backend.countPromptTokens([{ role: "user", content: "abc" }])).toBe(empty + 3);
    expect(await backend.countPromptTokens([{ role: "user", content: "é" }])).toBe(empty + 2);
  });

  it("yields one piece per generated token and reports the tokenizer's count of the text", async () => {
    const { pieces, text, outcome } = await generate({ maxTokens: 30 });
    expect(pieces).toHaveLength(30);
    expect(text.length).toBeGreaterThan(0);
    expect(outcome.usage?.completionTokens).toBe(backend.countTextTokens(text));
    expect(outcome.usage?.promptTokens).toBe(await backend.countPromptTokens(request().messages));
  });

  it("stops at max_tokens with finish_reason length", async () => {
    const { pieces, outcome } = await generate({ maxTokens: 5 });
    expect(pieces).toHaveLength(5);
    expect(outcome.finishReason).toBe("length");
  });

  it("is reproducible for a seed and varies with it", async () => {
    const first = await generate({ seed: 7, temperature: 0.9 });
    const again = await generate({ seed: 7, temperature: 0.9 });
    const other = await generate({ seed: 8, temperature: 0.9 });
    expect(again.text).toBe(first.text);
    expect(other.text).not.toBe(first.text);
  });

  it("ends before a stop sequence, leaves it out and finishes with stop", async () => {
    const { text: full } = await generate({ maxTokens: 40 });
    const stop = full.slice(12, 14);
    const cut = full.indexOf(stop);
    const { text, outcome } = await generate({ maxTokens: 40, stop: [stop] });
    expect(text).toBe(full.slice(0, cut));
    expect(outcome.finishReason).toBe("stop");
    expect(outcome.usage?.completionTokens).toBe(backend.countTextTokens(text));
  });

  it("applies frequency and presence penalties (greedy output changes under them)", async () => {
    const plain = await generate({ temperature: 0, maxTokens: 40 });
    const penalised = await generate({ temperature: 0, maxTokens: 40, frequencyPenalty: 2, presencePenalty: 2 });
    expect(penalised.text).not.toBe(plain.text);
    // A penalised token is not repeated as readily: more distinct characters in the same length.
    expect(new Set(penalised.text).size).toBeGreaterThan(new Set(plain.text).size);
  });

  it("clamps max_tokens to the room the context leaves and finishes with length", async () => {
    const prompt = await backend.countPromptTokens(request().messages);
    const { pieces, outcome } = await generate({ maxTokens: 10_000 });
    expect(pieces).toHaveLength(CONTEXT_SIZE - prompt);
    expect(outcome.finishReason).toBe("length");
  });

  it("error: refuses a prompt the context cannot hold before generating anything", async () => {
    const generation = backend.generate(
      request({ messages: [{ role: "user", content: "x".repeat(CONTEXT_SIZE) }] }),
      new AbortController().signal,
    );
    const failure = await generation.next().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BackendError);
    expect((failure as BackendError).message).toMatch(/context holds 256/);
  });

  it("stops generating when the signal aborts", async () => {
    const controller = new AbortController();
    const generation = backend.generate(request({ maxTokens: 200 }), controller.signal);
    const pieces: string[] = [];
    const failure = await (async () => {
      for (;;) {
        const step = await generation.next();
        if (step.done) return undefined;
        pieces.push(step.value);
        if (pieces.length === 3) controller.abort(new Error("client left"));
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe("client left");
    expect(pieces.length).toBeLessThan(200);
  });

  it("queues a second job until the single context sequence is free, then runs it", async () => {
    const [first, second] = await Promise.all([generate({ maxTokens: 20 }), generate({ maxTokens: 20 })]);
    expect(first.pieces).toHaveLength(20);
    expect(second.pieces).toHaveLength(20);
    expect(second.text).toBe(first.text);
  });

  it("leaves the queue when the signal aborts while waiting", async () => {
    const running = generate({ maxTokens: 150 });
    const controller = new AbortController();
    const queued = generate({ maxTokens: 5 }, controller.signal).catch((error: unknown) => error);
    controller.abort(new Error("gave up waiting"));
    expect(await queued).toMatchObject({ message: "gave up waiting" });
    expect((await running).pieces).toHaveLength(150);
  });
});
