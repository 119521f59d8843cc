import type { Hex } from "viem";
import type { KeyRecord } from "../http/middleware/authenticate.js";
import type { IndexTableListener } from "../readModel/indexTables.js";

export interface ActiveKeyCacheOptions {
  /** The index's table of keys (`api_key`): a block that writes it forgets every entry. */
  table: string;
  /**
   * An entry is read again after this long even without a notification: Ponder reverts a reorged block with its
   * notify triggers dropped, so a reorged-away registration is announced by nothing.
   */
  maxAgeMs: number;
  /** At most this many keys are kept (the oldest entry goes first). */
  maxEntries: number;
  now?: () => number;
}

/**
 * Active keys as the index last had them, for authenticating completions without a statement per request: the
 * key-status read was half the gateway's statements per job (issue 26). An entry is kept only while notifications
 * reach this process, and every block that writes the index's key table forgets them all (keys change rarely).
 * Only `active` is kept: a refusal still reads the index (and waits for it to catch up, IndexKeyDirectory).
 * Staleness is the notification's delay after the index's commit, as for the index itself: a revocation not seen yet
 * is refused by the escrow, which skips the lock (docs/DESIGN.md "Key status from the index").
 */
export class ActiveKeyCache implements IndexTableListener {
  private readonly entries = new Map<string, { record: KeyRecord; at: number }>();
  /** Bumped whenever entries may have gone stale: a read that began before may not keep its answer. */
  private generation = 0;
  private live = false;
  private readonly now: () => number;

  constructor(private readonly options: ActiveKeyCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  listening(up: boolean): void {
    this.live = up;
    this.forget();
  }

  changed(tables: readonly string[] | undefined): void {
    if (tables === undefined || tables.includes(this.options.table)) this.forget();
  }

  /** The kept record of an active key, if any. */
  get(keyHash: Hex): KeyRecord | undefined {
    if (!this.live) return undefined;
    const key = keyHash.toLowerCase();
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.at >= this.options.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.record;
  }

  /** Call before reading the index; pass the result to `keep` with what it read. */
  begin(): number {
    return this.generation;
  }

  /** Keeps an active key read since `began` (from `begin`), unless the key table may have changed meanwhile. */
  keep(keyHash: Hex, record: KeyRecord, began: number): void {
    if (!this.live || began !== this.generation || record.status !== "active" || this.options.maxAgeMs <= 0) return;
    const key = keyHash.toLowerCase();
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { record, at: this.now() });
  }

  private forget(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
