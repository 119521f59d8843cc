import type pg from "pg";
import { attemptDelivery, claimDueDeliveries, type Claimed, type DeliveryRunOptions } from "./runDeliveries.js";
import type { Sender } from "./sendDelivery.js";

export interface DeliverySlotOptions {
  /** Attempts this dispatcher runs at once, over all endpoints. */
  maxInFlight: number;
  /** Attempts one endpoint (webhook) may have in flight at once on this dispatcher. */
  perEndpoint: number;
}

/**
 * Independent in-flight slots for webhook attempts (issue 23, item 2). Each attempt runs on its own: when one
 * ends, its slot is free and the next due delivery is claimed at once, whatever the others are doing. No round
 * waits for its slowest member (the old dispatcher attempted 32 at a time and waited for all of them, so 19 slow
 * endpoints of one wallet held everyone's deliveries up to the 10 s timeout). An endpoint holds at most
 * `perEndpoint` slots, so a slow, failing or endless endpoint delays only its own deliveries; every attempt is
 * bounded (sendDelivery.ts: 10 s overall, a bounded body read), so a slot always comes back.
 */
export class DeliverySlots {
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private total = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sender: Sender,
    private readonly run: DeliveryRunOptions,
    private readonly options: DeliverySlotOptions,
    /** Called when an attempt ends (its slot is free): the caller claims again. */
    private readonly onSlotFree: () => void,
    private readonly onError: (error: unknown, delivery: Claimed) => void,
  ) {}

  /**
   * Claims due deliveries for the free slots and starts them. Resolves `true` when the claim came back whole and
   * slots are still free: more may be due, claim again at once. A shorter claim took every delivery due and
   * claimable then; one that comes due later is announced (NOTIFY, a freed slot) or found by the poll, so claiming
   * again at once would only repeat a statement that finds nothing.
   */
  async fill(): Promise<boolean> {
    const free = this.options.maxInFlight - this.total;
    if (free <= 0) return false;
    const batchSize = Math.min(free, this.run.batchSize);
    const claimed = await claimDueDeliveries(
      this.pool,
      { ...this.run, batchSize },
      { inFlight: this.inFlight, perEndpoint: this.options.perEndpoint },
    );
    for (const delivery of claimed) this.start(delivery);
    return claimed.length >= batchSize && !this.full;
  }

  /** Whether every slot is taken (claiming more would find none free). */
  get full(): boolean {
    return this.total >= this.options.maxInFlight;
  }

  /** Waits for the attempts in flight to be recorded. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private start(delivery: Claimed): void {
    this.total++;
    this.inFlight.set(delivery.webhook_id, (this.inFlight.get(delivery.webhook_id) ?? 0) + 1);
    const attempt: Promise<void> = attemptDelivery(this.pool, this.sender, delivery, this.run)
      // A failed record (database hiccup): the lease expires and the delivery is attempted again.
      .catch((error: unknown) => this.onError(error, delivery))
      .finally(() => {
        this.total--;
        const left = (this.inFlight.get(delivery.webhook_id) ?? 1) - 1;
        if (left > 0) this.inFlight.set(delivery.webhook_id, left);
        else this.inFlight.delete(delivery.webhook_id);
        this.running.delete(attempt);
        this.onSlotFree();
      });
    this.running.add(attempt);
  }
}
