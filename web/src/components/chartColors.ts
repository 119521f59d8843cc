/** One color per series, stable for a name across every chart of a page (a model keeps its color). */
const PALETTE = ["#2f5bea", "#e8833a", "#1f8a4c", "#9b51e0", "#d64550", "#1aa3b8", "#b8961a", "#627085"];

export function colorOf(name: string, names: readonly string[]): string {
  const index = names.indexOf(name);
  return PALETTE[(index < 0 ? 0 : index) % PALETTE.length]!;
}

/** How each job outcome is drawn and named. */
export const OUTCOME_STYLE: Record<string, { color: string; label: string }> = {
  settled: { color: "#1f8a4c", label: "settled" },
  pending: { color: "#2f5bea", label: "running" },
  failed: { color: "#d64550", label: "failed (not charged)" },
  refunded: { color: "#e8833a", label: "refunded" },
  disputed: { color: "#9b51e0", label: "disputed" },
};
