import { describe, expect, it } from "vitest";
import { pickWorker, type WorkerCandidate } from "./pickWorker.js";
import { LatencyStats, median } from "./latencyStats.js";

function worker(n: number, inflight: number, ttftP50Ms?: number): WorkerCandidate {
  return { address: `0x${String(n).padStart(40, "0")}`, endpoint: `http://127.0.0.1:${8690 + n}`, inflight, ttftP50Ms };
}

describe("pickWorker", () => {
  it("picks the worker with the fewest jobs in flight", () => {
    expect(pickWorker([worker(1, 3, 10), worker(2, 1, 500)])?.address).toBe(worker(2, 0).address);
  });

  it("breaks a tie on load with the lowest observed time to first token", () => {
    expect(pickWorker([worker(1, 0, 90), worker(2, 0, 40)])?.address).toBe(worker(2, 0).address);
  });

  it("tries a worker without latency samples before slower measured ones", () => {
    expect(pickWorker([worker(1, 0, 90), worker(2, 0)])?.address).toBe(worker(2, 0).address);
  });

  it("never picks a worker that already failed the job", () => {
    const excluded = new Set([worker(2, 0).address.toLowerCase()]);
    expect(pickWorker([worker(1, 5, 90), worker(2, 0, 10)], excluded)?.address).toBe(worker(1, 0).address);
  });

  it("returns undefined when every candidate is excluded", () => {
    expect(pickWorker([worker(1, 0)], new Set([worker(1, 0).address.toLowerCase()]))).toBeUndefined();
  });
});

describe("LatencyStats", () => {
  it("reports 0 for a model without samples", () => {
    expect(new LatencyStats().modelMedian("m")).toBe(0);
  });

  it("reports the p50 across workers of a model", () => {
    const stats = new LatencyStats();
    stats.record("0xA", "m", 10);
    stats.record("0xB", "m", 30);
    stats.record("0xB", "m", 20);
    stats.record("0xB", "other", 1000);
    expect(stats.modelMedian("m")).toBe(20);
    expect(stats.workerMedian("0xb", "m")).toBe(25);
  });

  it("reports a worker's p50 with the samples recorded since it was last read", () => {
    const stats = new LatencyStats();
    stats.record("0xA", "m", 10);
    expect(stats.workerMedian("0xa", "m")).toBe(10);
    stats.record("0xA", "m", 30);
    expect(stats.workerMedian("0xa", "m")).toBe(20);
  });

  it("computes the median of an even list as the mean of the middle two", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
