import { describe, expect, it } from "vitest";
import { FeeOracle } from "./feeOracle.js";

// The oracle's caching on its own. The node is a test double whose eth_feeHistory answers only when the test lets
// it, so "a caller does not wait for the reading in flight" can be observed; the fees against a real node are
// covered in transactionManager.test.ts.

const TTL_MS = 50;

class HeldNode {
  calls = 0;
  baseFee = 1n;
  private releases: (() => void)[] = [];

  getFeeHistory = (): Promise<{ baseFeePerGas: bigint[]; reward: bigint[][] }> => {
    this.calls++;
    const baseFee = this.baseFee;
    return new Promise((resolve) => this.releases.push(() => resolve({ baseFeePerGas: [baseFee], reward: [[0n]] })));
  };

  /** Lets every held reading answer. */
  answer(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

function oracle(node: HeldNode): FeeOracle {
  return new FeeOracle(node as never, { maxFeePerGas: 1_000n, minPriorityFeePerGas: 1n, ttlMs: TTL_MS });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `promise` settles before the event loop has run a few turns. */
async function settlesNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await sleep(5);
  return settled;
}

describe("FeeOracle", () => {
  it("serves the last reading without waiting while a newer one is taken", async () => {
    const node = new HeldNode();
    const fees = oracle(node);
    const first = fees.fees();
    node.answer();
    expect((await first).maxFeePerGas).toBe(3n);
    await sleep(TTL_MS + 10);
    node.baseFee = 10n;

    const stale = fees.fees();
    expect(await settlesNow(stale)).toBe(true);
    expect((await stale).maxFeePerGas).toBe(3n);
    expect(node.calls).toBe(2);
    node.answer();
    await sleep(1);
    expect((await fees.fees()).maxFeePerGas).toBe(21n);
  });

  it("takes one reading for every caller while it is in flight", async () => {
    const node = new HeldNode();
    const fees = oracle(node);
    const waiting = [fees.fees(), fees.fees(), fees.fees()];
    node.answer();
    await Promise.all(waiting);
    expect(node.calls).toBe(1);
  });

  it("waits for a new reading when the last is over ten times its lifetime old", async () => {
    const node = new HeldNode();
    const fees = oracle(node);
    const first = fees.fees();
    node.answer();
    await first;
    await sleep(TTL_MS * 10 + 20);

    const fresh = fees.fees();
    expect(await settlesNow(fresh)).toBe(false);
    node.answer();
    await fresh;
  });

  it("waits for a new reading when asked to refresh", async () => {
    const node = new HeldNode();
    const fees = oracle(node);
    const first = fees.fees();
    node.answer();
    await first;

    const refreshed = fees.fees(true);
    expect(await settlesNow(refreshed)).toBe(false);
    node.answer();
    await refreshed;
    expect(node.calls).toBe(2);
  });
});
