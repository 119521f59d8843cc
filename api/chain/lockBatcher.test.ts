import { pino } from "pino";
import type { Hex, TransactionReceipt } from "viem";
import { describe, expect, it } from "vitest";
import { GatewayMetrics } from "../observability/metrics.js";
import { LockBatcher, type LockOutcome, type LockPort, type LockRequest } from "./lockBatcher.js";
import type { RidingSettlements } from "./settlementBatcher.js";

// The group-commit queue on its own. The node is a test double that holds each send until the test lets it
// through, so "the next batch leaves when the previous one was accepted" can be observed step by step; the
// batcher against the real escrow (openJobBatch, JobOpened/JobOpenSkipped) is covered in test/api/ledger.test.ts.

function lock(n: number): LockRequest {
  return {
    jobKey: `0x${n.toString(16).padStart(64, "0")}`,
    keyHash: `0x${"11".repeat(32)}`,
    modelKey: `0x${"22".repeat(32)}`,
    maxTokens: 100,
    acceptedAt: 1_763_700_000n,
  };
}

class HeldNode implements LockPort {
  readonly batches: LockRequest[][] = [];
  private releases: (() => void)[] = [];
  skip = new Set<string>();
  failSend = false;

  /** Whether the node double tells the batcher when it signed (the transaction manager does). */
  tellsSigned = false;

  /** The settlements each batch carried (empty: none). */
  readonly riders: string[][] = [];
  /** Settlements that fit beside a batch's locks. */
  room = 100;

  ridersBeside(): number {
    return this.room;
  }

  openJobBatch(
    requests: readonly LockRequest[],
    onSigned?: (hash: Hex) => void,
    settlements?: Pick<RidingSettlements, "receipts">,
  ): Promise<Hex> {
    this.batches.push([...requests]);
    this.riders.push(settlements?.receipts.map((receipt) => String(receipt.jobId)) ?? []);
    const index = this.batches.length;
    if (this.tellsSigned) onSigned?.(`0x${index.toString(16).padStart(64, "0")}`);
    return new Promise((resolve, reject) =>
      this.releases.push(() =>
        this.failSend ? reject(new Error("node refused")) : resolve(`0x${index.toString(16).padStart(64, "0")}`),
      ),
    );
  }

  /** Lets the oldest held send be accepted. */
  accept(): void {
    this.releases.shift()?.();
  }

  async waitMined(hash: Hex): Promise<TransactionReceipt> {
    return { transactionHash: hash, blockNumber: 7n } as TransactionReceipt;
  }

  outcomesOf(receipt: TransactionReceipt): Map<string, LockOutcome> {
    const batch = this.batches[Number(BigInt(receipt.transactionHash)) - 1] ?? [];
    return new Map(
      batch.map((request): [string, LockOutcome] => [
        request.jobKey.toLowerCase(),
        this.skip.has(request.jobKey)
          ? { kind: "skipped", reason: "key_not_active", blockNumber: 7n }
          : { kind: "opened", balanceAfter: 1n, creditsLocked: 2n, deadline: 3n },
      ]),
    );
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const logger = pino({ level: "silent" });
const metrics = new GatewayMetrics();

describe("LockBatcher (group commit)", () => {
  it("a lock alone leaves at once, in a batch of one", async () => {
    const node = new HeldNode();
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    const queued = batcher.enqueue(lock(1));
    expect(node.batches).toEqual([[lock(1)]]);
    node.accept();
    expect(await queued.sent).toMatch(/^0x0+1$/);
  });

  it("locks queued while a batch is being sent leave together as soon as the node accepted it", async () => {
    const node = new HeldNode();
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    const first = batcher.enqueue(lock(1));
    const waiting = [2, 3, 4].map((n) => batcher.enqueue(lock(n)));
    expect(node.batches).toHaveLength(1);
    node.accept();
    await first.sent;
    await tick();
    expect(node.batches[1]).toEqual([lock(2), lock(3), lock(4)]);
    node.accept();
    const hashes = await Promise.all(waiting.map((queued) => queued.sent));
    expect(new Set(hashes).size).toBe(1);
  });

  it("a lock learns its batch's hash once the batch is signed, before the node accepted it", async () => {
    const node = new HeldNode();
    node.tellsSigned = true;
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    const queued = batcher.enqueue(lock(1));
    let accepted = false;
    void queued.sent.then(() => (accepted = true));
    expect(await queued.signed).toMatch(/^0x0+1$/);
    expect(accepted).toBe(false);
    node.accept();
    expect(await queued.sent).toBe(await queued.signed);
  });

  it("locks queued while a signed batch waits for the node still leave together after it was accepted", async () => {
    const node = new HeldNode();
    node.tellsSigned = true;
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    await batcher.enqueue(lock(1)).signed;
    const waiting = [2, 3].map((n) => batcher.enqueue(lock(n)));
    await tick();
    expect(node.batches).toHaveLength(1);
    node.accept();
    await tick();
    expect(node.batches[1]).toEqual([lock(2), lock(3)]);
    node.accept();
    await Promise.all(waiting.map((queued) => queued.sent));
  });

  it("without word from the port, a lock's signed hash is the accepted one", async () => {
    const node = new HeldNode();
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    const queued = batcher.enqueue(lock(1));
    node.accept();
    expect(await queued.signed).toBe(await queued.sent);
  });

  it("a batch carries at most `max` locks; the rest leave with the next", async () => {
    const node = new HeldNode();
    const batcher = new LockBatcher(node, { max: 2, logger, metrics });
    batcher.enqueue(lock(1));
    for (const n of [2, 3, 4, 5, 6]) batcher.enqueue(lock(n));
    node.accept();
    await tick();
    await tick();
    expect(node.batches.map((batch) => batch.length)).toEqual([1, 2]);
    node.accept();
    await tick();
    await tick();
    node.accept();
    await tick();
    await tick();
    node.accept();
    expect(node.batches.map((batch) => batch.length)).toEqual([1, 2, 2, 1]);
  });

  it("each lock learns what the mined batch did with it: opened, or skipped with the reason", async () => {
    const node = new HeldNode();
    node.skip.add(lock(2).jobKey);
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    batcher.enqueue(lock(0));
    const [opened, skipped] = [batcher.enqueue(lock(1)), batcher.enqueue(lock(2))];
    node.accept();
    await tick();
    node.accept();
    expect(await opened.mined).toEqual({ kind: "opened", balanceAfter: 1n, creditsLocked: 2n, deadline: 3n });
    expect(await skipped.mined).toEqual({ kind: "skipped", reason: "key_not_active", blockNumber: 7n });
  });

  it("a batch the node refuses fails each of its locks, and the queue goes on", async () => {
    const node = new HeldNode();
    const batcher = new LockBatcher(node, { max: 10, logger, metrics });
    node.failSend = true;
    const refused = batcher.enqueue(lock(1));
    node.accept();
    await expect(refused.signed).rejects.toThrow("node refused");
    await expect(refused.sent).rejects.toThrow("node refused");
    await expect(refused.mined).rejects.toThrow("node refused");
    node.failSend = false;
    const next = batcher.enqueue(lock(2));
    node.accept();
    await expect(next.sent).resolves.toMatch(/^0x/);
    await batcher.drain();
  });

  describe("settlements riding with the locks", () => {
    /** The settlement side: hands `waiting` once, records what it was told. */
    function settlements(waiting: string[]) {
      const told: string[] = [];
      let asked: number | undefined;
      const riders = {
        takeRiders(max: number): RidingSettlements | undefined {
          asked = max;
          if (waiting.length === 0) return undefined;
          const jobs = waiting.splice(0, max);
          return {
            receipts: jobs.map((jobId) => ({
              jobId: jobId as Hex,
              outputHash: "0x00",
              promptTokens: 1,
              completionTokens: 1,
              finalTokenAt: 1,
            })),
            signatures: jobs.map(() => "0x" as Hex),
            sent: (hash) => told.push(`sent ${hash}`),
            failed: () => told.push("failed"),
          };
        },
      };
      return { riders, told, asked: () => asked };
    }

    it("sends the settlements waiting to leave with the next lock batch, in its transaction", async () => {
      const node = new HeldNode();
      const side = settlements(["0xa", "0xb"]);
      const batcher = new LockBatcher(node, { max: 10, logger, metrics, riders: side.riders });
      const queued = batcher.enqueue(lock(1));
      await tick();
      node.accept();
      const hash = await queued.sent;
      expect(node.riders).toEqual([["0xa", "0xb"]]);
      expect(side.told).toEqual([`sent ${hash}`]);
    });

    it("takes no more settlements than fit beside the batch's locks", async () => {
      const node = new HeldNode();
      node.room = 1;
      const side = settlements(["0xa", "0xb"]);
      const batcher = new LockBatcher(node, { max: 10, logger, metrics, riders: side.riders });
      batcher.enqueue(lock(1));
      await tick();
      expect(side.asked()).toBe(1);
      expect(node.riders).toEqual([["0xa"]]);
    });

    it("tells the settlements when the batch carrying them could not be sent", async () => {
      const node = new HeldNode();
      node.failSend = true;
      const side = settlements(["0xa"]);
      const batcher = new LockBatcher(node, { max: 10, logger, metrics, riders: side.riders });
      const queued = batcher.enqueue(lock(1));
      await tick();
      node.accept();
      await expect(queued.sent).rejects.toThrow("node refused");
      expect(side.told).toEqual(["failed"]);
    });

    it("sends a plain lock batch when no settlement waits", async () => {
      const node = new HeldNode();
      const side = settlements([]);
      const batcher = new LockBatcher(node, { max: 10, logger, metrics, riders: side.riders });
      batcher.enqueue(lock(1));
      await tick();
      expect(node.riders).toEqual([[]]);
    });
  });
});
