import type { IndexLagMonitor } from "../readModel/indexLag.js";

/** How often a waiting request looks again at the index while it catches up. */
const RECHECK_MS = 50;

/**
 * "Is the index as new as the chain was when this request arrived?" The ledger and the key directory answer from
 * the index, which may lag the chain by a block: a client that deposits (or registers a key) and sends a request
 * at once must not be refused for it. Before answering "insufficient" or "unknown key", the request waits here —
 * bounded by `maxWaitMs` — until the index has caught up with a chain head read after the request arrived.
 * The head is read by the background lag sampler (api/readModel/indexLag.ts); waiting requests share its samples, so
 * a burst of refusals costs one head read, and a served request costs none.
 */
export class IndexFreshness {
  constructor(
    private readonly lag: Pick<IndexLagMonitor, "sample" | "snapshot">,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Resolves true once the index has caught up with the chain head as of `since` (ms since epoch), false when it
   * has not within the bound (or the chain or the index does not answer).
   */
  async caughtUpSince(since: number): Promise<boolean> {
    const until = since + this.maxWaitMs;
    for (;;) {
      // The first sample may have started before `since` (samples are shared); the second one did not.
      await this.lag.sample();
      await this.lag.sample();
      const snapshot = this.lag.snapshot();
      if (snapshot.chainUp && snapshot.indexUp && snapshot.lagBlocks === 0) return true;
      if (Date.now() + RECHECK_MS > until) return false;
      await new Promise((resolve) => setTimeout(resolve, RECHECK_MS));
    }
  }
}
