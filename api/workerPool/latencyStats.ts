/** Rolling time-to-first-token samples per worker and model; the source of `median_latency_ms` and of routing. */
export class LatencyStats {
  private readonly samples = new Map<string, number[]>();
  /** Each worker's p50 for one model, kept until its next sample: routing reads it twice per request (issue 26). */
  private readonly medians = new Map<string, number | undefined>();

  constructor(private readonly maxSamples = 100) {}

  record(worker: string, model: string, ttftMs: number): void {
    const key = `${worker.toLowerCase()}|${model}`;
    const list = this.samples.get(key) ?? [];
    list.push(ttftMs);
    if (list.length > this.maxSamples) list.shift();
    this.samples.set(key, list);
    this.medians.delete(key);
  }

  /** p50 of one worker (any model when `model` is undefined). */
  workerMedian(worker: string, model?: string): number | undefined {
    if (model !== undefined) {
      const key = `${worker.toLowerCase()}|${model}`;
      if (this.medians.has(key)) return this.medians.get(key);
      const value = median(this.samples.get(key) ?? []);
      this.medians.set(key, value);
      return value;
    }
    const prefix = `${worker.toLowerCase()}|`;
    const all: number[] = [];
    for (const [key, list] of this.samples) {
      if (key.startsWith(prefix) && (model === undefined || key === `${prefix}${model}`)) all.push(...list);
    }
    return median(all);
  }

  /** p50 across every worker serving `model`; 0 before the first sample. */
  modelMedian(model: string): number {
    const all: number[] = [];
    for (const [key, list] of this.samples) if (key.endsWith(`|${model}`)) all.push(...list);
    return Math.round(median(all) ?? 0);
  }
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
