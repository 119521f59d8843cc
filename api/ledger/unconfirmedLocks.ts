import type { GatewayMetrics } from "../observability/metrics.js";

/**
 * The gateway's exposure in `submitted` lock mode: credits of jobs routed to a worker on a lock not yet mined.
 * If the chain then skips the lock, that work is never paid; the ledger's reservation makes a skip rare (the
 * credits were there as far as the index knew), and this bound caps what a burst of skips could cost: a job
 * beyond it waits for its lock to be mined before it is routed.
 */
export class UnconfirmedLocks {
  private credits = 0;
  private jobs = 0;

  constructor(
    private readonly maxCredits: number,
    private readonly metrics: Pick<GatewayMetrics, "unconfirmedLockCredits" | "unconfirmedLocks">,
  ) {}

  /** Counts the job as routed on an unmined lock, if the bound allows; false: route it only once mined. */
  tryAdmit(credits: number): boolean {
    if (this.credits + credits > this.maxCredits) return false;
    this.credits += credits;
    this.jobs += 1;
    this.publish();
    return true;
  }

  /** The job's lock was mined (taken or skipped) or the job ended before. */
  confirmed(credits: number): void {
    this.credits = Math.max(0, this.credits - credits);
    this.jobs = Math.max(0, this.jobs - 1);
    this.publish();
  }

  get current(): { credits: number; jobs: number } {
    return { credits: this.credits, jobs: this.jobs };
  }

  private publish(): void {
    this.metrics.unconfirmedLockCredits.set(this.credits);
    this.metrics.unconfirmedLocks.set(this.jobs);
  }
}
