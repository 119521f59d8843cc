/**
 * The last value read from the index for each key, with when it was read: what the read endpoints answer with
 * (and how old it is) while the index does not answer. Bounded: the least recently stored keys go first.
 */
export class LastKnown<K, V> {
  private readonly entries = new Map<K, { value: V; at: number }>();

  constructor(private readonly max = 10_000) {}

  remember(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at: Date.now() });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** The value and its age in ms, if one was stored within `maxAgeMs`. */
  recall(key: K, maxAgeMs: number): { value: V; ageMs: number } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const ageMs = Date.now() - entry.at;
    return ageMs <= maxAgeMs ? { value: entry.value, ageMs } : undefined;
  }
}
