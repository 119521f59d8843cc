import { describe, expect, it } from "vitest";
import { JobRegistry, type JobRecord } from "./jobRegistry.js";

function record(jobId: string): JobRecord {
  return {
    jobId,
    jobIdBytes32: `0x${"00".repeat(32)}`,
    escrow: { chainId: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3" },
    model: "m",
    promptTokens: 1,
    tokens: [],
    tokenAt: [],
    acceptedAt: 0,
    controller: new AbortController(),
    state: "running",
  };
}

describe("JobRegistry", () => {
  it("counts the running jobs among those added and not released", () => {
    const registry = new JobRegistry();
    const [a, b, c] = [record("job_a"), record("job_b"), record("job_c")];
    for (const job of [a, b, c]) registry.add(job);
    expect(registry.inflight()).toBe(3);

    // A cancel or a hang-up changes the state before the stream ends: no longer running, still unreleased.
    b.state = "cancelled";
    expect(registry.inflight()).toBe(2);
    expect(registry.running()).toEqual([a, c]);

    registry.release(a);
    expect(a.state).toBe("failed");
    expect(registry.running()).toEqual([c]);
    registry.release(b);
    c.state = "done";
    registry.release(c);
    expect(registry.inflight()).toBe(0);
    expect(registry.running()).toEqual([]);
    // Released records stay answerable (late cancels).
    expect(registry.get("job_b")).toBe(b);
  });

  it("counts a job id run again after its first run ended", () => {
    const registry = new JobRegistry();
    const first = record("job_a");
    registry.add(first);
    first.state = "done";
    registry.release(first);
    const again = record("job_a");
    registry.add(again);
    expect(registry.get("job_a")).toBe(again);
    expect(registry.running()).toEqual([again]);
    registry.release(again);
    expect(registry.inflight()).toBe(0);
  });
});
