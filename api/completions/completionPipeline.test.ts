import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import type { MinedSettlement, SettlementHandle } from "../jobs/jobLifecycle.js";
import { CompletionPipeline, type CompletionPipelineDeps } from "./completionPipeline.js";
import type { OpenedJob } from "./openEscrow.js";
import type { PreparedCompletion } from "./prepareCompletion.js";
import type { RelayOutcome } from "./relayCompletion.js";

const WORKER = "0x00000000000000000000000000000000000000aa" as Hex;
const opened = { jobId: "job_1", creditsLocked: 10, balanceAfterLock: 90 } as OpenedJob;
const prepared = { model: { creditsPerRequest: 2, creditsPer1kTokens: 4 } } as unknown as PreparedCompletion;
const delivered = {
  kind: "delivered",
  text: "hi",
  finishReason: "stop",
  promptTokens: 3,
  completionTokens: 4,
  worker: WORKER,
  backend: "simulated",
  close: { kind: "receipt", receipt: { completionTokens: 4n }, signature: "0x", worker: WORKER },
} as unknown as RelayOutcome;

/** A pipeline whose lifecycle settles every job with `settlement` (only `conclude` and `finished` are exercised). */
function pipelineSettlingWith(settlement: SettlementHandle) {
  const activeJobs = new Set<string>([opened.jobId]);
  const deps = {
    conclude: {
      lifecycle: {
        conclude: async () => ({ kind: "settling", settlement }),
        fail: async () => undefined,
      },
    },
    activeJobs,
  } as unknown as CompletionPipelineDeps;
  return { pipeline: new CompletionPipeline(deps), activeJobs };
}

describe("CompletionPipeline: a charged job and the sweeper", () => {
  it("stays the process's own after its request ends, until its settlement is mined", async () => {
    const mined = Promise.withResolvers<MinedSettlement>();
    const { pipeline, activeJobs } = pipelineSettlingWith({
      submitted: Promise.resolve("0x01" as Hex),
      mined: mined.promise,
    });
    const concluded = await pipeline.conclude(prepared, opened, delivered);
    expect(concluded.kind).toBe("charged");
    pipeline.finished(opened);
    expect(activeJobs.has(opened.jobId)).toBe(true);
    mined.resolve({ hash: "0x01" as Hex, blockNumber: 1n });
    await new Promise((resolve) => setImmediate(resolve));
    expect(activeJobs.has(opened.jobId)).toBe(false);
  });

  it("is let go to the sweeper when its settlement fails", async () => {
    const mined = Promise.withResolvers<MinedSettlement>();
    mined.promise.catch(() => undefined);
    const { pipeline, activeJobs } = pipelineSettlingWith({
      submitted: Promise.resolve("0x01" as Hex),
      mined: mined.promise,
    });
    await pipeline.conclude(prepared, opened, delivered);
    pipeline.finished(opened);
    mined.reject(new Error("reverted"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(activeJobs.has(opened.jobId)).toBe(false);
  });

  it("stays running while its request is still answered, even once its settlement is mined", async () => {
    const { pipeline, activeJobs } = pipelineSettlingWith({
      submitted: Promise.resolve("0x01" as Hex),
      mined: Promise.resolve({ hash: "0x01" as Hex, blockNumber: 1n }),
    });
    await pipeline.conclude(prepared, opened, delivered);
    await new Promise((resolve) => setImmediate(resolve));
    expect(activeJobs.has(opened.jobId)).toBe(true);
    pipeline.finished(opened);
    expect(activeJobs.has(opened.jobId)).toBe(false);
  });
});
