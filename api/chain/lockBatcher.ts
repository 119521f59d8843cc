import type { Logger } from "pino";
import type { Hex, TransactionReceipt } from "viem";
import { phaseTraceOn, traceTransaction } from "../observability/phaseTrace.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { RidingSettlements } from "./settlementBatcher.js";

/** One lock of `openJobBatch` (ICreditEscrow.OpenRequest). */
export interface LockRequest {
  jobKey: Hex;
  keyHash: Hex;
  modelKey: Hex;
  maxTokens: number;
  /**
   * When the gateway accepted the request, unix seconds on the chain's clock (EscrowChain.acceptedAtNow). The
   * job's deadline and its receipt's times run from it, however late the lock is mined; the escrow skips a lock
   * mined more than `MAX_LOCK_DELAY` after it (`accepted_at_invalid`).
   */
  acceptedAt: bigint;
}

/** Why `openJobBatch` skipped a lock: ICreditEscrow.OpenSkipReason, in enum order (`none` is never emitted). */
export const OPEN_SKIP_REASONS = [
  "none",
  "job_exists",
  "key_not_active",
  "model_not_listed",
  "max_tokens_invalid",
  "insufficient_credits",
  "spending_cap_exceeded",
  "request_malformed",
  "accepted_at_invalid",
] as const;
export type OpenSkipReason = (typeof OPEN_SKIP_REASONS)[number];

/** What a mined batch did with one lock. */
export type LockOutcome =
  | { kind: "opened"; balanceAfter: bigint; creditsLocked: bigint; deadline: bigint }
  | { kind: "skipped"; reason: OpenSkipReason; blockNumber: bigint };

export interface LockPort {
  /**
   * Signs and sends `openJobBatch` (`openAndSettleBatch` with `settlements`); resolves with the hash once the node
   * accepted the transaction. `onSigned`, when the port can tell, hears the hash as soon as the transaction is
   * signed, before it leaves.
   */
  openJobBatch(
    requests: readonly LockRequest[],
    onSigned?: (hash: Hex) => void,
    settlements?: Pick<RidingSettlements, "receipts" | "signatures">,
  ): Promise<Hex>;
  /** How many settlements fit in one transaction beside `locks` locks (the transaction's gas bound). */
  ridersBeside(locks: number): number;
  /** Resolves with the mined receipt; rejects when the transaction reverted. */
  waitMined(hash: Hex): Promise<TransactionReceipt>;
  /** The JobOpened / JobOpenSkipped of each lock in a mined batch, by job key (lower-case). */
  outcomesOf(receipt: TransactionReceipt): Map<string, LockOutcome>;
}

export interface QueuedLock {
  /**
   * The batch transaction's hash once it is signed at its nonce, before it is recorded and broadcast (or with
   * `sent`, for a port that cannot tell); rejects when the batch could not be signed or sent.
   */
  signed: Promise<Hex>;
  /** The hash of the batch transaction a node accepted (not mined): `signed`'s, unless the nodes made it re-sign. */
  sent: Promise<Hex>;
  /** What the mined batch did with this lock; rejects when the batch reverted or was never mined. */
  mined: Promise<LockOutcome>;
}

interface Pending {
  request: LockRequest;
  signed: PromiseWithResolvers<Hex>;
  sent: PromiseWithResolvers<Hex>;
  mined: PromiseWithResolvers<LockOutcome>;
}

/**
 * Group commit for escrow locks (docs/DESIGN.md "Locks"). A lock is queued at once; when no batch is being
 * sent, the queue leaves at once as one `openJobBatch`; while one is being signed and sent, new locks wait and
 * leave together with the next one as soon as the node has accepted the previous. One lock alone therefore waits
 * for nothing, and under load many locks share a transaction (up to `max` each). Settlements waiting in the
 * settlement batcher's window (`riders`) leave with the locks, in the same transaction, behind them.
 */
export class LockBatcher {
  private queue: Pending[] = [];
  private sending = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly port: LockPort,
    private readonly options: {
      max: number;
      logger: Logger;
      metrics: Pick<GatewayMetrics, "lockBatchSize">;
      /** Where settlements ready to leave are taken from (the settlement batcher); none ride without it. */
      riders?: { takeRiders(max: number): RidingSettlements | undefined };
    },
  ) {}

  enqueue(request: LockRequest): QueuedLock {
    const item: Pending = {
      request,
      signed: Promise.withResolvers(),
      sent: Promise.withResolvers(),
      mined: Promise.withResolvers(),
    };
    // A caller may stop listening (client gone); never an unhandled rejection.
    item.signed.promise.catch(() => undefined);
    item.sent.promise.catch(() => undefined);
    item.mined.promise.catch(() => undefined);
    this.queue.push(item);
    this.pump();
    return { signed: item.signed.promise, sent: item.sent.promise, mined: item.mined.promise };
  }

  /** Resolves once everything queued has been sent and mined (or failed). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.sending || this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight]);
      if (this.queue.length > 0 && !this.sending) this.pump();
      if (this.sending) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private pump(): void {
    if (this.sending || this.queue.length === 0) return;
    this.sending = true;
    const batch = this.queue.splice(0, this.options.max);
    void this.send(batch).finally(() => {
      this.sending = false;
      this.pump();
    });
  }

  private async send(batch: Pending[]): Promise<void> {
    const began = phaseTraceOn ? performance.now() : 0;
    let hash: Hex;
    const riders = this.options.riders?.takeRiders(this.port.ridersBeside(batch.length));
    try {
      hash = await this.port.openJobBatch(
        batch.map((item) => item.request),
        (signedHash) => {
          for (const item of batch) item.signed.resolve(signedHash);
        },
        riders,
      );
    } catch (error) {
      riders?.failed(error);
      this.options.logger.error({ err: error, locks: batch.length }, "lock batch could not be sent");
      for (const item of batch) {
        item.signed.reject(error);
        item.sent.reject(error);
        item.mined.reject(error);
      }
      return;
    }
    riders?.sent(hash);
    this.options.metrics.lockBatchSize.observe(batch.length);
    if (phaseTraceOn) traceTransaction(hash, { batchBegan: began, batchSize: batch.length });
    for (const item of batch) {
      // A port that cannot tell when it signed: the accepted hash is the first one known.
      item.signed.resolve(hash);
      item.sent.resolve(hash);
    }
    const mined = this.port.waitMined(hash).then(
      (receipt) => {
        const outcomes = this.port.outcomesOf(receipt);
        for (const item of batch) {
          const outcome = outcomes.get(item.request.jobKey.toLowerCase());
          if (outcome) item.mined.resolve(outcome);
          else item.mined.reject(new Error(`lock batch ${hash} has no event for job ${item.request.jobKey}`));
        }
      },
      (error: unknown) => {
        this.options.logger.error({ err: error, tx: hash, locks: batch.length }, "lock batch not mined");
        for (const item of batch) item.mined.reject(error);
      },
    );
    this.inFlight.add(mined);
    void mined.finally(() => this.inFlight.delete(mined));
  }
}
