import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { LoopCpuMonitor } from "./loopCpuMonitor.js";

function spinFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("LoopCpuMonitor", () => {
  it("reports a synchronous stretch of work as at least its CPU time", async () => {
    const monitor = new LoopCpuMonitor();
    try {
      monitor.takeMaxMs();
      await sleep(30);
      const before = process.threadCpuUsage();
      spinFor(60);
      const spent = process.threadCpuUsage(before);
      await sleep(30);
      // What the spin cost the thread, however much of the 60 ms wall-clock a loaded host gave it.
      const spentMs = (spent.user + spent.system) / 1000;
      const held = monitor.takeMaxMs();
      // Both are sums of microsecond clocks turned into ms: equal values may differ in the last binary digit.
      expect(held).toBeGreaterThanOrEqual(spentMs - 0.001);
      expect(held).toBeLessThanOrEqual(spentMs + 20);
    } finally {
      monitor.stop();
    }
  });

  it("does not count time the thread spent waiting", async () => {
    const monitor = new LoopCpuMonitor();
    try {
      monitor.takeMaxMs();
      await sleep(120);
      expect(monitor.takeMaxMs()).toBeLessThan(20);
    } finally {
      monitor.stop();
    }
  });

  it("starts a new window on every read", async () => {
    const monitor = new LoopCpuMonitor();
    try {
      spinFor(40);
      monitor.takeMaxMs();
      await sleep(50);
      expect(monitor.takeMaxMs()).toBeLessThan(20);
    } finally {
      monitor.stop();
    }
  });
});
