import { describe, expect, it } from "vitest";
import { CreditSlice, LOOKUP_MAX_GAP_MS } from "./creditSlice.js";

// Which reservations in flight a sweep looks for in the index (the in-memory half of docs/DESIGN.md "Credit slices").

const SWEEP_MS = 100;
const NEVER = 0;

/** The times, among sweeps every SWEEP_MS from 0 to `untilMs`, at which the sweep looks for `jobKey`. */
function lookupTimes(slice: CreditSlice, jobKey: string, untilMs: number, unmarkedBefore = NEVER): number[] {
  const times: number[] = [];
  for (let now = 0; now <= untilMs; now += SWEEP_MS)
    for (const [key, , marked] of slice.inflightEntries(now, unmarkedBefore))
      if (key === jobKey && marked) times.push(now);
  return times;
}

function sliceServing(...jobKeys: string[]): CreditSlice {
  const slice = new CreditSlice("gw/1", "0xwallet", 0);
  slice.held = 1_000n;
  slice.validUntil = Number.MAX_SAFE_INTEGER;
  for (const jobKey of jobKeys) expect(slice.serve(jobKey, 10n, 0)).toBe(true);
  return slice;
}

describe("credit slice lookups", () => {
  it("a reservation whose lock was not seen mined is not looked for", () => {
    const slice = sliceServing("a");
    expect(lookupTimes(slice, "a", 3_000)).toEqual([]);
  });

  it("a mined lock is looked for at once, then after gaps as long as its age: a few lookups however long the index lags", () => {
    const slice = sliceServing("a");
    slice.lockMined("a", 0);
    expect(lookupTimes(slice, "a", 3_000)).toEqual([0, 100, 200, 400, 800, 1_600]);
  });

  it("the gap between two lookups of a mined lock never passes LOOKUP_MAX_GAP_MS", () => {
    const slice = sliceServing("a");
    slice.lockMined("a", 0);
    const times = lookupTimes(slice, "a", 12_000);
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(LOOKUP_MAX_GAP_MS + SWEEP_MS);
  });

  it("a reservation served before unmarkedBefore is looked for as if its lock had been seen mined", () => {
    const slice = sliceServing("a");
    expect(lookupTimes(slice, "a", 300, 1)).toEqual([0, 100, 200]);
  });

  it("a released reservation is no longer looked for, and a lock marked mined after its release is ignored", () => {
    const slice = sliceServing("a", "b");
    slice.lockMined("a", 0);
    slice.release("a");
    slice.lockMined("a", 0);
    expect([...slice.inflightEntries(0, NEVER)].map(([key]) => key)).toEqual(["b"]);
  });
});
