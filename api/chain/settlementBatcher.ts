import type { Hex, TransactionReceipt } from "viem";
import type { Logger } from "pino";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { Receipt } from "./receiptTypes.js";

export interface SettlementPort {
  settle(receipt: Receipt, signature: Hex): Promise<Hex>;
  settleBatch(receipts: readonly Receipt[], signatures: readonly Hex[]): Promise<Hex>;
  waitMined(hash: Hex): Promise<TransactionReceipt>;
  /** Job ids (lower-case) a mined `settleBatch` skipped (`SettlementSkipped`): their jobs are still open. */
  skippedJobs(receipt: TransactionReceipt): ReadonlySet<string>;
}

export interface SettlementTicket {
  /** Resolves with the settlement transaction hash as soon as it is sent (not mined). */
  submitted: Promise<Hex>;
  /** Resolves with the mined receipt of the transaction that settled this job (its hash: the version mined, which
   *  differs from `submitted` when the transaction manager replaced it with higher fees). */
  mined: Promise<{ hash: Hex; receipt: TransactionReceipt }>;
}

/**
 * Settlements handed to a lock batch (`SettlementBatcher.takeRiders`): sent with its locks in one
 * `openAndSettleBatch`, then followed as a batch of their own would be.
 */
export interface RidingSettlements {
  receipts: readonly Receipt[];
  signatures: readonly Hex[];
  /** The transaction carrying them was accepted by the node as `hash`. */
  sent(hash: Hex): void;
  /** It could not be sent: each is settled on its own. */
  failed(error: unknown): void;
}

interface Pending {
  receipt: Receipt;
  signature: Hex;
  submitted: PromiseWithResolvers<Hex>;
  mined: PromiseWithResolvers<{ hash: Hex; receipt: TransactionReceipt }>;
}

/**
 * Collects receipts for `windowMs` (or until `max`; after a quiet window, only for the current turn of the event
 * loop) and settles them in one `settleBatch`, a batch of one
 * included: the batch is sent without waiting for its jobs' locks to be mined (issue 26; the same signer sent them
 * first, so nonce order mines them first) and never reverts for one receipt, whereas `settle` would revert if the
 * escrow skipped the lock. The escrow settles every valid receipt of a batch and skips the others
 * (`SettlementSkipped`); a skipped receipt is retried alone with `settle`, so its job gets the escrow's reason (and
 * the sweeper fails it, returning its escrow, when the reason is final). A batch that could not be sent or did
 * revert (mined, e.g. paused) is retried job by job. Receipts still queued when a lock batch leaves ride with it
 * (`takeRiders`): one transaction instead of two (less gas per job; docs/DESIGN.md "Settlements ride with locks").
 */
export class SettlementBatcher {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the last batch left; a receipt arriving a whole window later leaves at once. */
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly port: SettlementPort,
    private readonly options: {
      windowMs: number;
      max: number;
      logger: Logger;
      metrics: Pick<GatewayMetrics, "settlementLag" | "settlementFailures" | "settlementBatchSize">;
    },
  ) {}

  enqueue(receipt: Receipt, signature: Hex): SettlementTicket {
    const item: Pending = { receipt, signature, submitted: Promise.withResolvers(), mined: Promise.withResolvers() };
    // Nobody may be awaiting `mined` yet (non-streaming waits for `submitted` only); never an unhandled rejection.
    item.mined.promise.catch(() => undefined);
    item.submitted.promise.catch(() => undefined);
    const queuedAt = Date.now();
    item.mined.promise.then(
      () => this.options.metrics.settlementLag.observe((Date.now() - queuedAt) / 1000),
      () => this.options.metrics.settlementFailures.inc(),
    );
    this.queue.push(item);
    if (this.queue.length >= this.options.max) this.flush();
    else if (!this.timer) {
      // After a quiet window the receipt leaves at the end of this turn of the event loop instead of waiting out a
      // window nobody shares: a whole completion's answer names its settlement transaction, so the window was
      // added to every answer at low load (issue 26, "nothing waits"). Receipts that follow a batch within the
      // window still gather, so batches stay large under load (gas per job, issue 22).
      const quiet = Date.now() - this.lastSentAt >= this.options.windowMs;
      this.timer = setTimeout(() => this.flush(), quiet ? 0 : this.options.windowMs);
    }
    return { submitted: item.submitted.promise, mined: item.mined.promise };
  }

  /** Sends everything queued now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length > 0) this.lastSentAt = Date.now();
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.max);
      const run = this.settleGroup(batch).finally(() => this.inFlight.delete(run));
      this.inFlight.add(run);
    }
  }

  /**
   * Hands up to `max` queued receipts to a lock batch that is leaving now (api/chain/lockBatcher.ts), or undefined
   * when none is queued. They count as a batch sent: the window restarts, and they are followed to the chain as
   * one.
   */
  takeRiders(max: number): RidingSettlements | undefined {
    if (this.queue.length === 0 || max <= 0) return undefined;
    const batch = this.queue.splice(0, Math.min(max, this.options.max));
    if (this.queue.length === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.lastSentAt = Date.now();
    this.options.metrics.settlementBatchSize.observe(batch.length);
    const track = (run: Promise<void>) => {
      const tracked = run.finally(() => this.inFlight.delete(tracked));
      this.inFlight.add(tracked);
    };
    // Held until the lock batch answers, so that `drain` waits for them too.
    const answered = Promise.withResolvers<void>();
    track(answered.promise);
    return {
      receipts: batch.map((item) => item.receipt),
      signatures: batch.map((item) => item.signature),
      sent: (hash) => {
        track(this.follow(batch, hash));
        answered.resolve();
      },
      failed: (error) => {
        this.options.logger.warn(
          { err: error, size: batch.length },
          "lock batch with settlements refused; settling one by one",
        );
        track(Promise.all(batch.map((item) => this.settleOne(item))).then(() => undefined));
        answered.resolve();
      },
    };
  }

  /** Flushes and waits for every settlement in flight (graceful shutdown). */
  async drain(): Promise<void> {
    this.flush();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async settleGroup(batch: Pending[]): Promise<void> {
    this.options.metrics.settlementBatchSize.observe(batch.length);
    let hash: Hex;
    try {
      hash = await this.port.settleBatch(
        batch.map((item) => item.receipt),
        batch.map((item) => item.signature),
      );
    } catch (error) {
      this.options.logger.warn({ err: error, size: batch.length }, "settleBatch refused; settling one by one");
      await Promise.all(batch.map((item) => this.settleOne(item)));
      return;
    }
    await this.follow(batch, hash);
  }

  /** A batch sent as `hash` (alone or with locks): its jobs learn the hash, then what the mined batch did. */
  private async follow(batch: Pending[], hash: Hex): Promise<void> {
    for (const item of batch) item.submitted.resolve(hash);
    try {
      const receipt = await this.port.waitMined(hash);
      const skipped = this.port.skippedJobs(receipt);
      for (const item of batch) {
        if (skipped.has(item.receipt.jobId.toLowerCase())) {
          this.options.logger.warn(
            { hash, job: item.receipt.jobId },
            "settleBatch skipped a receipt; settling it alone",
          );
          await this.settleOne(item, true);
        } else item.mined.resolve({ hash: receipt.transactionHash, receipt });
      }
    } catch (error) {
      this.options.logger.warn({ err: error, hash }, "settleBatch reverted; settling one by one");
      await Promise.all(batch.map((item) => this.settleOne(item, true)));
    }
  }

  private async settleOne(item: Pending, alreadySubmitted = false): Promise<void> {
    try {
      const hash = await this.port.settle(item.receipt, item.signature);
      if (!alreadySubmitted) item.submitted.resolve(hash);
      const receipt = await this.port.waitMined(hash);
      item.mined.resolve({ hash: receipt.transactionHash, receipt });
    } catch (error) {
      item.submitted.reject(error);
      item.mined.reject(error);
    }
  }
}
