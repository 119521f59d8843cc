import { describe, expect, it } from "vitest";
import { pino } from "pino";
import type { Hex, TransactionReceipt } from "viem";
import { GatewayMetrics } from "../observability/metrics.js";
import { SettlementBatcher, type SettlementPort } from "./settlementBatcher.js";
import type { Receipt } from "./receiptTypes.js";

/** Test double of the chain side: records what would be sent; refuses batches/receipts on request. */
class RecordingSettlementPort implements SettlementPort {
  readonly sent: string[] = [];
  refuseBatch = false;
  revertBatch = false;
  refuseJob = new Set<string>();
  /** Jobs the chain skips inside a mined batch (SettlementSkipped). */
  skipInBatch = new Set<string>();
  private count = 0;

  async settle(receipt: Receipt): Promise<Hex> {
    if (this.refuseJob.has(receipt.jobId)) throw new Error(`refused ${receipt.jobId}`);
    this.sent.push(`settle:${receipt.jobId}`);
    return this.hash();
  }

  async settleBatch(receipts: readonly Receipt[]): Promise<Hex> {
    if (this.refuseBatch) throw new Error("batch would revert");
    this.sent.push(`batch:${receipts.map((r) => r.jobId).join(",")}`);
    return this.hash(this.revertBatch ? "reverting" : "");
  }

  skippedJobs(): ReadonlySet<string> {
    return this.skipInBatch;
  }

  /** Transactions the transaction manager replaced at the same nonce: sent hash → the hash that was mined. */
  replacedBy = new Map<Hex, Hex>();

  async waitMined(hash: Hex): Promise<TransactionReceipt> {
    if (hash.endsWith("dead")) throw new Error("reverted");
    return {
      status: "success",
      blockNumber: 1n,
      transactionHash: this.replacedBy.get(hash) ?? hash,
    } as TransactionReceipt;
  }

  private hash(kind = ""): Hex {
    this.count++;
    return `0x${String(this.count).padStart(60, "0")}${kind ? "dead" : "beef"}`;
  }
}

const logger = pino({ level: "silent" });
const metrics = new GatewayMetrics();
const receipt = (n: number): Receipt => ({
  jobId: `0x${n}`,
  outputHash: "0x00",
  promptTokens: 1,
  completionTokens: 1,
  finalTokenAt: 1,
});

describe("SettlementBatcher", () => {
  it("settles a lone receipt with a settleBatch of one, which never reverts if its lock was skipped", async () => {
    const port = new RecordingSettlementPort();
    const batcher = new SettlementBatcher(port, { windowMs: 5, max: 10, logger, metrics });
    await batcher.enqueue(receipt(1), "0x").mined;
    expect(port.sent).toEqual(["batch:0x1"]);
  });

  it("settles receipts arriving within the window in one settleBatch", async () => {
    const port = new RecordingSettlementPort();
    const batcher = new SettlementBatcher(port, { windowMs: 20, max: 10, logger, metrics });
    const tickets = [1, 2, 3].map((n) => batcher.enqueue(receipt(n), "0x"));
    const hashes = await Promise.all(tickets.map((t) => t.submitted));
    expect(port.sent).toEqual(["batch:0x1,0x2,0x3"]);
    expect(new Set(hashes).size).toBe(1);
  });

  it("sends a receipt that follows a quiet window at once, without waiting out the window", async () => {
    const port = new RecordingSettlementPort();
    const batcher = new SettlementBatcher(port, { windowMs: 60_000, max: 10, logger, metrics });
    await batcher.enqueue(receipt(1), "0x").submitted;
    expect(port.sent).toEqual(["batch:0x1"]);
  });

  it("gathers the receipts that follow a batch within the window into the next batch", async () => {
    const port = new RecordingSettlementPort();
    const batcher = new SettlementBatcher(port, { windowMs: 50, max: 10, logger, metrics });
    await batcher.enqueue(receipt(1), "0x").submitted;
    const tickets = [2, 3].map((n) => batcher.enqueue(receipt(n), "0x"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(port.sent).toEqual(["batch:0x1"]);
    await Promise.all(tickets.map((t) => t.submitted));
    expect(port.sent).toEqual(["batch:0x1", "batch:0x2,0x3"]);
  });

  it("sends at once when the batch is full", async () => {
    const port = new RecordingSettlementPort();
    const batcher = new SettlementBatcher(port, { windowMs: 60_000, max: 2, logger, metrics });
    const tickets = [1, 2].map((n) => batcher.enqueue(receipt(n), "0x"));
    await Promise.all(tickets.map((t) => t.mined));
    expect(port.sent).toEqual(["batch:0x1,0x2"]);
  });

  it("falls back to single settles when the batch would revert, settling the good ones", async () => {
    const port = new RecordingSettlementPort();
    port.refuseBatch = true;
    port.refuseJob.add("0x2");
    const batcher = new SettlementBatcher(port, { windowMs: 10, max: 10, logger, metrics });
    const [good, bad] = [1, 2].map((n) => batcher.enqueue(receipt(n), "0x"));
    await expect(good!.mined).resolves.toBeDefined();
    await expect(bad!.mined).rejects.toThrow("refused");
    expect(port.sent).toEqual(["settle:0x1"]);
  });

  it("falls back to single settles when a sent batch reverts", async () => {
    const port = new RecordingSettlementPort();
    port.revertBatch = true;
    const batcher = new SettlementBatcher(port, { windowMs: 10, max: 10, logger, metrics });
    const tickets = [1, 2].map((n) => batcher.enqueue(receipt(n), "0x"));
    await Promise.all(tickets.map((t) => t.mined));
    expect(port.sent).toEqual(["batch:0x1,0x2", "settle:0x1", "settle:0x2"]);
  });

  it("settles a receipt the mined batch skipped on its own, so its job gets the escrow's reason", async () => {
    const port = new RecordingSettlementPort();
    port.skipInBatch.add("0x2");
    port.refuseJob.add("0x2");
    const batcher = new SettlementBatcher(port, { windowMs: 10, max: 10, logger, metrics });
    const tickets = [1, 2, 3].map((n) => batcher.enqueue(receipt(n), "0x"));
    await expect(tickets[1]!.mined).rejects.toThrow("refused 0x2");
    await Promise.all([tickets[0]!.mined, tickets[2]!.mined]);
    expect(port.sent).toEqual(["batch:0x1,0x2,0x3"]);
  });

  it("reports the mined hash of a settlement the transaction manager replaced, beside the hash first sent", async () => {
    const port = new RecordingSettlementPort();
    const sentHash: Hex = `0x${"1".padStart(60, "0")}beef`;
    const replacement: Hex = `0x${"ab".repeat(32)}`;
    port.replacedBy.set(sentHash, replacement);
    const ticket = new SettlementBatcher(port, { windowMs: 5, max: 10, logger, metrics }).enqueue(receipt(1), "0x");
    expect(await ticket.submitted).toBe(sentHash);
    expect((await ticket.mined).hash).toBe(replacement);
  });

  describe("riding with a lock batch", () => {
    /** A batcher with receipts 1..n waiting out a window that only a lock batch ends. */
    async function waiting(n: number, max = 10) {
      const port = new RecordingSettlementPort();
      const batcher = new SettlementBatcher(port, { windowMs: 60_000, max, logger, metrics });
      // The first receipt of a quiet window leaves alone; the ones after it wait for the window (or a lock batch).
      const first = batcher.enqueue(receipt(0), "0x");
      await first.submitted;
      const tickets = Array.from({ length: n }, (_, i) => batcher.enqueue(receipt(i + 1), "0x"));
      return { port, batcher, first, tickets };
    }
    const lockHash: Hex = `0x${"1a".repeat(32)}`;

    it("hands the receipts waiting in the window to a leaving lock batch, which they leave with", async () => {
      const { port, batcher, tickets } = await waiting(2);
      const riders = batcher.takeRiders(10);
      expect(riders?.receipts.map((r) => r.jobId)).toEqual(["0x1", "0x2"]);
      riders!.sent(lockHash);
      expect(await Promise.all(tickets.map((t) => t.submitted))).toEqual([lockHash, lockHash]);
      expect((await tickets[0]!.mined).hash).toBe(lockHash);
      expect(port.sent).toEqual(["batch:0x0"]);
    });

    it("hands none when none waits", () => {
      const port = new RecordingSettlementPort();
      const batcher = new SettlementBatcher(port, { windowMs: 10, max: 10, logger, metrics });
      expect(batcher.takeRiders(10)).toBeUndefined();
    });

    it("hands at most what fits beside the locks; the rest leave with the window", async () => {
      const { port, batcher, tickets } = await waiting(3);
      const riders = batcher.takeRiders(2);
      expect(riders?.receipts).toHaveLength(2);
      riders!.sent(lockHash);
      batcher.flush();
      await Promise.all(tickets.map((t) => t.mined));
      expect(port.sent).toEqual(["batch:0x0", "batch:0x3"]);
    });

    it("settles each rider on its own when the lock batch could not be sent", async () => {
      const { port, batcher, tickets } = await waiting(2);
      batcher.takeRiders(10)!.failed(new Error("node refused"));
      await Promise.all(tickets.map((t) => t.mined));
      expect(port.sent).toEqual(["batch:0x0", "settle:0x1", "settle:0x2"]);
    });

    it("settles each rider on its own when the transaction that carried them reverted", async () => {
      const { port, batcher, tickets } = await waiting(2);
      batcher.takeRiders(10)!.sent(`0x${"1".padStart(60, "0")}dead`);
      await Promise.all(tickets.map((t) => t.mined));
      expect(port.sent).toEqual(["batch:0x0", "settle:0x1", "settle:0x2"]);
    });

    it("settles a rider the mined transaction skipped on its own", async () => {
      const { port, batcher, tickets } = await waiting(2);
      port.skipInBatch.add("0x2");
      batcher.takeRiders(10)!.sent(lockHash);
      await Promise.all(tickets.map((t) => t.mined));
      expect(port.sent).toEqual(["batch:0x0", "settle:0x2"]);
    });

    it("drains only once the lock batch carrying its riders has answered", async () => {
      const { batcher, tickets } = await waiting(1);
      const riders = batcher.takeRiders(10)!;
      let drained = false;
      const draining = batcher.drain().then(() => (drained = true));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(drained).toBe(false);
      riders.sent(lockHash);
      await draining;
      expect((await tickets[0]!.mined).hash).toBe(lockHash);
    });
  });
});
