import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import type { Hex } from "viem";
import pino from "pino";
import { ApiError } from "../errors/ApiError.js";
import type { WorkerEvent } from "../workerPool/workerProtocol.js";
import type { OpenedJob } from "./openEscrow.js";
import type { PreparedCompletion } from "./prepareCompletion.js";
import { relayCompletion, type RelayDeps, type RelaySink } from "./relayCompletion.js";

// The relay and a job routed before its row committed (issue 26, openEscrow.ts): the worker starts at once, the
// client sees nothing until `recorded`. The worker client is an in-memory stand-in of the worker protocol that
// answers an acknowledgement and a token as soon as it is called; the pool, lifecycle and store are fakes of the
// ports the relay takes.

const WORKER = "0x00000000000000000000000000000000000000aa" as Hex;

function prepared(): PreparedCompletion {
  return {
    request: { model: "m", messages: [{ role: "user", content: "hi" }], stream: true },
    model: { id: "m", tier: "small", modelKey: `0x${"22".repeat(32)}`, contextWindow: 4096 },
    wallet: WORKER,
    keyHash: `0x${"33".repeat(32)}`,
    promptTokens: 3,
    maxTokens: 16,
    creditsToLock: 5,
  } as unknown as PreparedCompletion;
}

function openedJob(recorded: Promise<void>, refused: AbortController): OpenedJob {
  return {
    jobId: "job_01JZ0000000000000000000000",
    jobKey: `0x${"44".repeat(32)}`,
    escrowTx: `0x${"55".repeat(32)}`,
    creditsLocked: 5,
    balanceAfterLock: 95,
    deadline: 2_000_000_000n,
    startedAt: Date.now(),
    lockMined: Promise.resolve(),
    recorded,
    lockRefused: refused.signal,
    endedWithoutCharge: false,
    lockConfirmed: false,
  };
}

function harness(
  clientGone: AbortSignal = new AbortController().signal,
  answer: WorkerEvent[] = [{ type: "token", text: "Hello" }],
  deliversIncrementally = true,
  jobTimeoutMs = 60_000,
) {
  const workerCalled = Promise.withResolvers<void>();
  const payloads: unknown[] = [];
  const signals: AbortSignal[] = [];
  async function* runJob(_endpoint: string, payload: unknown, signal: AbortSignal): AsyncGenerator<WorkerEvent> {
    payloads.push(payload);
    signals.push(signal);
    workerCalled.resolve();
    yield { type: "ack", worker: WORKER, backend: "simulated" };
    yield* answer;
    // The rest of the answer never comes before the test ends the job (which may have ended it already).
    await new Promise((_, reject) => {
      if (signal.aborted) reject(signal.reason as Error);
      else signal.addEventListener("abort", () => reject(signal.reason as Error));
    });
  }
  const deps = {
    workers: {
      candidatesFresh: async () => [{ address: WORKER, endpoint: "http://worker.invalid", inflight: 0, ttftP50Ms: 1 }],
      backendOf: () => "simulated",
      jobStarted: () => undefined,
      jobEnded: () => undefined,
    },
    workerClient: { runJob, cancel: vi.fn(async () => undefined) },
    chain: { chainId: 31337, escrowAddress: WORKER },
    lifecycle: { acknowledged: async () => ({ moved: true }) },
    jobs: { update: async () => undefined },
    latency: { record: () => undefined },
    metrics: { timeToFirstToken: { observe: () => undefined } },
    config: { JOB_TIMEOUT_MS: jobTimeoutMs },
    logger: pino({ level: "silent" }),
  } as unknown as RelayDeps;
  const seen: string[] = [];
  const sink: RelaySink = {
    onServing: () => seen.push("serving"),
    onToken: (text) => seen.push(text),
    clientGone,
    deliversIncrementally,
  };
  return { deps, sink, seen, payloads, signals, workerCalled: workerCalled.promise };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("relayCompletion: a job routed before its row committed", () => {
  it("starts the worker at once but gives the client nothing until the row is committed", async () => {
    const { deps, sink, seen, workerCalled } = harness();
    const recorded = Promise.withResolvers<void>();
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(recorded.promise, refused), sink);
    await workerCalled;
    await settle();
    expect(seen).toEqual([]);
    recorded.resolve();
    await settle();
    expect(seen).toEqual(["serving", "Hello"]);
    refused.abort(new ApiError("service_unavailable"));
    await relaying;
  });

  it("answers the refusal, with nothing delivered, when the row could not be written", async () => {
    const { deps, sink, seen, workerCalled } = harness();
    const recorded = Promise.withResolvers<void>();
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(recorded.promise, refused), sink);
    await workerCalled;
    // What openEscrow does when the insert fails: the refusal first, then `recorded` settles.
    refused.abort(new ApiError("service_unavailable"));
    recorded.resolve();
    const outcome = await relaying;
    expect(seen).toEqual([]);
    expect(outcome.kind).toBe("worker_failed");
    expect(outcome.close.kind).toBe("failed");
    if (outcome.kind === "worker_failed") expect(outcome.error.code).toBe("service_unavailable");
  });

  it("delivers nothing to a client that left while the row was being committed", async () => {
    const gone = new AbortController();
    const { deps, sink, seen, workerCalled } = harness(gone.signal);
    const recorded = Promise.withResolvers<void>();
    const relaying = relayCompletion(deps, prepared(), openedJob(recorded.promise, new AbortController()), sink);
    await workerCalled;
    await settle();
    gone.abort();
    recorded.resolve();
    const outcome = await relaying;
    expect(seen).toEqual([]);
    expect(outcome.kind).toBe("client_gone");
    expect(outcome.close.kind).toBe("failed");
  });
});

describe("relayCompletion: how the worker writes the tokens", () => {
  it("asks for whole delivery when the client reads the answer only once it is whole", async () => {
    const { deps, sink, payloads, workerCalled } = harness(undefined, undefined, false);
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(Promise.resolve(), refused), sink);
    await workerCalled;
    expect(payloads[0]).toMatchObject({ delivery: "whole" });
    refused.abort(new ApiError("service_unavailable"));
    await relaying;
  });

  it("asks a stream's worker for a token line each (the protocol's default)", async () => {
    const { deps, sink, payloads, workerCalled } = harness();
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(Promise.resolve(), refused), sink);
    await workerCalled;
    expect(payloads[0]).not.toHaveProperty("delivery");
    refused.abort(new ApiError("service_unavailable"));
    await relaying;
  });

  it("relays gathered tokens to the client one token at a time, in order, after the first", async () => {
    const answer: WorkerEvent[] = [
      { type: "token", text: "He" },
      { type: "tokens", texts: ["l", "lo"] },
    ];
    const { deps, sink, seen, workerCalled } = harness(undefined, answer, false);
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(Promise.resolve(), refused), sink);
    await workerCalled;
    await settle();
    expect(seen).toEqual(["serving", "He", "l", "lo"]);
    refused.abort(new ApiError("service_unavailable"));
    await relaying;
  });
});

describe("relayCompletion: what stops an attempt", () => {
  it("the job's deadline stops a worker that keeps its stream open, and the job times out", async () => {
    const { deps, sink, signals } = harness(undefined, undefined, true, 50);
    const outcome = await relayCompletion(deps, prepared(), openedJob(Promise.resolve(), new AbortController()), sink);
    expect(outcome.kind).toBe("timed_out");
    expect(signals[0]?.aborted).toBe(true);
  });

  it("a lock refused while the candidates were read stops the attempt before the worker is asked", async () => {
    const { deps, sink, signals } = harness();
    const refused = new AbortController();
    const workers = deps.workers as unknown as { candidatesFresh: () => Promise<unknown[]> };
    const candidates = workers.candidatesFresh;
    workers.candidatesFresh = async () => {
      refused.abort(new ApiError("insufficient_credits"));
      return candidates();
    };
    const outcome = await relayCompletion(deps, prepared(), openedJob(Promise.resolve(), refused), sink);
    expect(outcome.close).toEqual({ kind: "failed", reason: "escrow lock refused" });
    if (outcome.kind === "worker_failed") expect(outcome.error.code).toBe("insufficient_credits");
    // The worker, if it was called at all, got a signal already aborted.
    for (const signal of signals) expect(signal.aborted).toBe(true);
  });

  it("leaves no listener on the lock's refusal once the job ends", async () => {
    const { deps, sink, workerCalled } = harness();
    const refused = new AbortController();
    const relaying = relayCompletion(deps, prepared(), openedJob(Promise.resolve(), refused), sink);
    await workerCalled;
    expect(getEventListeners(refused.signal, "abort").length).toBeGreaterThan(0);
    refused.abort(new ApiError("service_unavailable"));
    await relaying;
    expect(getEventListeners(refused.signal, "abort")).toEqual([]);
  });
});
