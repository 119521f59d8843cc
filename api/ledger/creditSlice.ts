/**
 * One gateway's slice of one wallet's credits, in memory (docs/DESIGN.md "Credit slices"). The database row
 * (`ledger_slice`) holds `held` credits; this object hands them out to reservations without a statement each.
 * Invariant: `held` = free + reservations in flight + credits being given back, so the row never holds less than
 * what this gateway promised.
 */
export class CreditSlice {
  /** Mirror of `ledger_slice.credits`, changed only when a statement that changed the row has committed. */
  held = 0n;
  /** Reservations served from this slice whose lock the index does not show yet, by job key. */
  readonly inflight = new Map<string, bigint>();
  /** When each reservation in flight was served (Map order: oldest first). */
  private readonly servedAt = new Map<string, number>();
  /**
   * Reservations in flight whose lock the gateway saw mined (the index may show them now): when they were marked, and
   * when the sweep looks for them next.
   */
  private readonly lookups = new Map<string, { markedAt: number; dueAt: number }>();
  private inflightSum = 0n;
  /** Unused credits a sweep in progress is giving back (not servable meanwhile). */
  returning = 0n;
  /** The last grant taken into the slice: the next one may be at most twice as large. */
  lastGrant = 0n;
  /** Serve only before this local time: well inside the row's `expires_at`, so a peer never deletes a row in use. */
  validUntil = 0;
  /** A peer asked for this wallet's credits: give the unused part back, take only what a request needs. */
  contendedUntil = 0;
  lastUsedAt: number;
  /** The wallet's credits outside every slice at the last take (for the `availableAfter` figure). */
  outside = 0n;
  /** The take in progress, if any: one at a time per slice, other requests wait for it. */
  taking: Promise<unknown> | undefined;
  private demand = 0;
  private demandAt: number;

  constructor(
    readonly id: string,
    readonly wallet: string,
    now: number,
  ) {
    this.lastUsedAt = now;
    this.demandAt = now;
  }

  get free(): bigint {
    const free = this.held - this.inflightSum - this.returning;
    return free > 0n ? free : 0n;
  }

  get inflightCredits(): bigint {
    return this.inflightSum;
  }

  usable(now: number): boolean {
    return now < this.validUntil;
  }

  /** Serves `credits` for `jobKey` from the unused part; false when the slice cannot cover them. */
  serve(jobKey: string, credits: bigint, now: number): boolean {
    if (!this.usable(now) || this.free < credits) return false;
    this.inflight.set(jobKey, credits);
    this.servedAt.set(jobKey, now);
    this.inflightSum += credits;
    this.lastUsedAt = now;
    this.demand = this.rate(now) + Number(credits);
    this.demandAt = now;
    return true;
  }

  /** The reservation's credits go back to the unused part (its lock was skipped or never sent). */
  release(jobKey: string): bigint | undefined {
    const credits = this.inflight.get(jobKey);
    if (credits === undefined) return undefined;
    this.inflight.delete(jobKey);
    this.servedAt.delete(jobKey);
    this.lookups.delete(jobKey);
    this.inflightSum -= credits;
    return credits;
  }

  /** The reservation's lock was mined (or may have been): the sweep looks for it in the index from now on. */
  lockMined(jobKey: string, now: number): void {
    if (this.inflight.has(jobKey) && !this.lookups.has(jobKey)) this.lookups.set(jobKey, { markedAt: now, dueAt: now });
  }

  /**
   * The reservations in flight, each marked when the sweep at `now` looks for it in the index. One whose lock was
   * mined is looked for at once, then after gaps as long as its age since (at most LOOKUP_MAX_GAP_MS): about
   * log₂(lag / sweep interval) lookups however far the index lags, instead of one per sweep. One the gateway never
   * saw mined is treated as mined once served before `unmarkedBefore`.
   */
  *inflightEntries(now: number, unmarkedBefore: number): Generator<[jobKey: string, credits: bigint, marked: boolean]> {
    for (const [jobKey, credits] of this.inflight) {
      let lookup = this.lookups.get(jobKey);
      if (lookup === undefined && this.servedAt.get(jobKey)! < unmarkedBefore) {
        lookup = { markedAt: now, dueAt: now };
        this.lookups.set(jobKey, lookup);
      }
      const due = lookup !== undefined && now >= lookup.dueAt;
      if (due) lookup!.dueAt = now + Math.min(LOOKUP_MAX_GAP_MS, now - lookup!.markedAt);
      yield [jobKey, credits, due];
    }
  }

  /**
   * Reservations served before `before` that neither the index showed nor the gateway released (their lock was
   * lost): released, as a reservation row expires after LEDGER_RESERVATION_TTL_MS. Returns their job keys.
   */
  expire(before: number): string[] {
    const expired: string[] = [];
    for (const [jobKey, at] of this.servedAt) {
      if (at >= before) break;
      expired.push(jobKey);
    }
    for (const jobKey of expired) this.release(jobKey);
    return expired;
  }

  /** The reservation's lock is in the index (so its credits left `credits_available`): the row shrinks by it. */
  indexed(jobKey: string, credits: bigint): void {
    // The row shrank by the figure the sweep sent, even if the reservation was released meanwhile.
    this.held -= credits;
    this.release(jobKey);
  }

  /**
   * The slice sizing rule: a take asks for `max(need, min(2 × last grant, demand over DEMAND_HORIZON_MS))`. The
   * first take of a wallet is exactly what the request lacks (a wallet with little balance is not tied up in one
   * gateway); each later one at most doubles, bounded by this gateway's recent rate for the wallet; while a peer
   * asks for the wallet's credits, only what the request lacks.
   */
  want(need: bigint, now: number): bigint {
    if (now < this.contendedUntil) return need;
    const demand = BigInt(Math.ceil((this.rate(now) * DEMAND_HORIZON_MS) / DEMAND_TAU_MS));
    const grown = 2n * this.lastGrant < demand ? 2n * this.lastGrant : demand;
    return grown > need ? grown : need;
  }

  /** Credits reserved per DEMAND_TAU_MS, exponentially decayed. */
  private rate(now: number): number {
    return this.demand * Math.exp(-(now - this.demandAt) / DEMAND_TAU_MS);
  }
}

/** The longest gap between two lookups of a mined lock the index does not show yet. */
export const LOOKUP_MAX_GAP_MS = 2_000;

/** A slice is sized to about this much of its wallet's demand in this gateway (one take per horizon at a steady rate). */
export const DEMAND_HORIZON_MS = 1_000;
const DEMAND_TAU_MS = 1_000;
