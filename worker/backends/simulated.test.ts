import { describe, expect, it } from "vitest";
import type { SimulatedModelConfig } from "../config.js";
import { encodeText } from "../tokenizer.js";
import { createSimulatedBackend, planSimulatedCompletion } from "./simulated.js";
import { simulatedText } from "./simulatedText.js";
import type { GenerationRequest } from "./types.js";

const config: SimulatedModelConfig = {
  backend: "simulated",
  ttftMs: 0,
  tokensPerSecond: 10_000,
  minOutputTokens: 20,
  maxOutputTokens: 60,
};

function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    model: "qwen3-1.7b",
    messages: [{ role: "user", content: "Tell me about escrow." }],
    maxTokens: 1_000,
    stop: [],
    seed: 3,
    ...overrides,
  };
}

function naturalText(overrides: Partial<GenerationRequest> = {}): string {
  const r = request(overrides);
  return simulatedText({
    model: r.model,
    messages: r.messages,
    seed: r.seed,
    minOutputTokens: 20,
    maxOutputTokens: 60,
  });
}

describe("simulated backend", () => {
  it("plans token texts that concatenate to exactly the natural text", () => {
    const plan = planSimulatedCompletion(config, request());
    expect(plan.tokens.join("")).toBe(naturalText());
    expect(plan.finishReason).toBe("stop");
  });

  it("keeps the natural length within the configured token range plus one sentence", () => {
    for (let seed = 0; seed < 25; seed += 1) {
      const tokens = encodeText(naturalText({ seed })).length;
      expect(tokens).toBeGreaterThanOrEqual(20);
      expect(tokens).toBeLessThanOrEqual(60 + 20);
    }
  });

  it("depends on the model as well as the messages and seed", () => {
    expect(naturalText({ model: "gemma-3-27b-it" })).not.toBe(naturalText());
  });

  it("treats an absent seed as a fixed seed", () => {
    expect(naturalText({ seed: undefined })).toBe(naturalText({ seed: undefined }));
  });

  it("yields the planned tokens and reports no engine usage (the job runner's counts are exact)", async () => {
    const backend = createSimulatedBackend(config);
    const generation = backend.generate(request({ maxTokens: 9 }), new AbortController().signal);
    const tokens: string[] = [];
    let step = await generation.next();
    while (!step.done) {
      tokens.push(step.value);
      step = await generation.next();
    }
    expect(tokens).toHaveLength(9);
    expect(step.value).toEqual({ finishReason: "length" });
  });

  it("streams a repeated request's planned tokens again, and another request's own (plans are remembered per request)", async () => {
    const backend = createSimulatedBackend(config);
    const run = async (overrides: Partial<GenerationRequest>) => {
      const tokens: string[] = [];
      for await (const token of backend.generate(request(overrides), new AbortController().signal)) tokens.push(token);
      return tokens;
    };
    expect(await run({})).toEqual(planSimulatedCompletion(config, request()).tokens);
    expect(await run({})).toEqual(planSimulatedCompletion(config, request()).tokens);
    expect(await run({ seed: 4 })).toEqual(planSimulatedCompletion(config, request({ seed: 4 })).tokens);
    expect(await run({ maxTokens: 5 })).toHaveLength(5);
  });

  it("waits the time to first token before the first token", async () => {
    const backend = createSimulatedBackend({ ...config, ttftMs: 120 });
    const started = performance.now();
    await backend.generate(request(), new AbortController().signal).next();
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
  });

  it("error: stops with the abort reason as soon as the signal aborts", async () => {
    const backend = createSimulatedBackend({ ...config, tokensPerSecond: 1 });
    const controller = new AbortController();
    const generation = backend.generate(request(), controller.signal);
    await generation.next();
    const pending = generation.next();
    controller.abort(new Error("cancelled by the gateway"));
    await expect(pending).rejects.toThrow("cancelled by the gateway");
  });
});
