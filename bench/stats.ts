/** Nearest-rank percentile of `values` (p in 0–100); undefined for no values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export type Quantiles = { p50: number | null; p95: number | null; p99: number | null; n: number };

export function quantiles(values: readonly number[]): Quantiles {
  const at = (p: number) => {
    const value = percentile(values, p);
    return value === undefined ? null : round(value);
  };
  return { p50: at(50), p95: at(95), p99: at(99), n: values.length };
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
