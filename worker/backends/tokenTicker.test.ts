import { describe, expect, it } from "vitest";
import type { SimulatedModelConfig } from "../config.js";
import { createSimulatedBackend } from "./simulated.js";
import { RELEASE_AHEAD_MS, TokenTicker } from "./tokenTicker.js";

describe("TokenTicker", () => {
  it("releases waits in due order, never more than RELEASE_AHEAD_MS before their due time", async () => {
    const ticker = new TokenTicker();
    const start = performance.now();
    const dues = Array.from({ length: 200 }, (_, index) => start + ((index * 7919) % 40) + (index % 3) * 0.3);
    const released: { index: number; at: number }[] = [];
    await Promise.all(
      dues.map(async (due, index) => {
        await ticker.pacer(new AbortController().signal).until(due);
        released.push({ index, at: performance.now() });
      }),
    );
    for (const { index, at } of released) expect(at).toBeGreaterThanOrEqual(dues[index]! - RELEASE_AHEAD_MS);
    const order = released.map(({ index }) => index);
    // Equal due times keep their registration order.
    const expected = dues.map((due, index) => ({ due, index })).sort((a, b) => a.due - b.due || a.index - b.index);
    expect(order).toEqual(expected.map(({ index }) => index));
    expect(ticker.pending()).toBe(0);
  });

  it("releases a wait whose time has passed at the next tick", async () => {
    const ticker = new TokenTicker();
    let released = false;
    const waiting = ticker
      .pacer(new AbortController().signal)
      .until(performance.now() - 50)
      .then(() => (released = true));
    expect(released).toBe(false);
    await waiting;
    expect(released).toBe(true);
  });

  it("rejects a wait at once when its job aborts, and drops it; other jobs keep their pace", async () => {
    const ticker = new TokenTicker();
    const controller = new AbortController();
    const start = performance.now();
    const cancelled = ticker.pacer(controller.signal).until(start + 1_000);
    const other = ticker.pacer(new AbortController().signal).until(start + 30);
    setTimeout(() => controller.abort(new Error("cancelled by the gateway")), 10);
    await expect(cancelled).rejects.toThrow("cancelled by the gateway");
    expect(performance.now() - start).toBeLessThan(500);
    expect(ticker.pending()).toBe(1);
    await other;
    expect(performance.now()).toBeGreaterThanOrEqual(start + 30 - RELEASE_AHEAD_MS);
    expect(ticker.pending()).toBe(0);
  });

  it("rejects a wait asked for after the abort", async () => {
    const ticker = new TokenTicker();
    const controller = new AbortController();
    const pacer = ticker.pacer(controller.signal);
    controller.abort(new Error("gone"));
    await expect(pacer.until(performance.now() + 5)).rejects.toThrow("gone");
    expect(ticker.pending()).toBe(0);
  });
});

describe("simulated backend on the shared ticker", () => {
  const config: SimulatedModelConfig = {
    backend: "simulated",
    ttftMs: 30,
    tokensPerSecond: 20,
    minOutputTokens: 12,
    maxOutputTokens: 12,
  };
  const request = (seed: number) => ({
    model: "m",
    messages: [{ role: "user" as const, content: "pace" }],
    maxTokens: 1_000,
    stop: [],
    seed,
  });

  it("keeps each job's tokens in order at the configured time to first token and rate, jobs side by side", async () => {
    const backend = createSimulatedBackend(config);
    // Plan each request first (the planner caches it), so the timings below measure pacing, not the tokenizer.
    const aborted = AbortSignal.abort(new Error("warm-up"));
    for (const seed of [1, 2, 3])
      await backend
        .generate(request(seed), aborted)
        .next()
        .catch(() => undefined);
    const runs = await Promise.all(
      [1, 2, 3].map(async (seed) => {
        const start = performance.now();
        const times: number[] = [];
        const tokens: string[] = [];
        for await (const token of backend.generate(request(seed), new AbortController().signal)) {
          times.push(performance.now() - start);
          tokens.push(token);
        }
        return { times, tokens };
      }),
    );
    for (const { times, tokens } of runs) {
      expect(tokens.length).toBeGreaterThanOrEqual(12);
      // Token i is due at ttft + i × 50 ms: never more than RELEASE_AHEAD_MS early, and the last one nowhere near a
      // slower pace (one interval more per token would put it 550 ms later; the bound leaves a loaded machine 250).
      for (const [index, at] of times.entries()) expect(at).toBeGreaterThanOrEqual(30 + index * 50 - RELEASE_AHEAD_MS);
      const last = times.length - 1;
      expect(times[last]!).toBeLessThan(30 + last * 50 + 250);
    }
  });

  it("stops a job cancelled mid-stream at once: no further token, no wait left behind", async () => {
    // The next token is 2 s away, so "at once" is told from "at the next token" by a margin no load can close.
    const backend = createSimulatedBackend({ ...config, ttftMs: 0, tokensPerSecond: 0.5 });
    const controller = new AbortController();
    const generation = backend.generate(request(4), controller.signal);
    const tokens: string[] = [];
    tokens.push((await generation.next()).value as string);
    tokens.push((await generation.next()).value as string);
    const pending = generation.next();
    const abortedAt = performance.now();
    controller.abort(new Error("cancelled by the gateway"));
    await expect(pending).rejects.toThrow("cancelled by the gateway");
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    expect(await generation.next()).toEqual({ done: true, value: undefined });
    expect(tokens).toHaveLength(2);
  });
});
