import { describe, expect, it } from "vitest";
import type { IndexLagSnapshot } from "../readModel/indexLag.js";
import { IndexFreshness } from "./indexFreshness.js";

// The waiting rule alone, against a scripted lag sampler (a test double of IndexLagMonitor, which reads the chain
// head and the indexer's status); the whole path — deposit, then a request at once — is in test/api/ledger.test.ts.

class ScriptedLag {
  samples = 0;
  constructor(private readonly lagOfSample: (n: number) => number) {}
  private current: IndexLagSnapshot = {
    chainHead: 10,
    indexedBlock: 9,
    lagBlocks: 1,
    lagSeconds: 1,
    indexUp: true,
    chainUp: true,
    sampledAt: 0,
  };
  async sample(): Promise<void> {
    this.samples += 1;
    const lagBlocks = this.lagOfSample(this.samples);
    this.current = { ...this.current, lagBlocks, indexedBlock: 10 - lagBlocks, sampledAt: Date.now() };
  }
  snapshot(): IndexLagSnapshot {
    return this.current;
  }
}

describe("IndexFreshness", () => {
  it("answers at once (after fresh samples) when the index has caught up", async () => {
    const lag = new ScriptedLag(() => 0);
    expect(await new IndexFreshness(lag, 2_000).caughtUpSince(Date.now())).toBe(true);
    // Two samples: the first may have started before the request arrived.
    expect(lag.samples).toBe(2);
  });

  it("waits while the index is behind, and answers once it caught up", async () => {
    const lag = new ScriptedLag((n) => (n < 5 ? 1 : 0));
    expect(await new IndexFreshness(lag, 2_000).caughtUpSince(Date.now())).toBe(true);
    expect(lag.samples).toBeGreaterThanOrEqual(5);
  });

  it("gives up after the bound when the index stays behind", async () => {
    const lag = new ScriptedLag(() => 3);
    const since = Date.now();
    expect(await new IndexFreshness(lag, 200).caughtUpSince(since)).toBe(false);
    expect(lag.samples).toBeGreaterThan(2);
  });
});
