import { ContractFunctionRevertedError, encodeErrorResult, zeroAddress } from "viem";
import { afterEach, describe, expect, it, vi } from "vitest";
import { creditEscrowAbi } from "./abis.js";
import { mapOpenJobRevert } from "./mapOpenJobRevert.js";

function revert(errorName: "SpendingCapExceeded" | "InsufficientCredits", args: readonly bigint[]) {
  const data = encodeErrorResult({
    abi: creditEscrowAbi,
    errorName,
    args: [zeroAddress, ...args] as never,
  });
  return new ContractFunctionRevertedError({ abi: creditEscrowAbi, data, functionName: "openJob" });
}

describe("mapOpenJobRevert", () => {
  afterEach(() => vi.useRealTimers());

  it("answers SpendingCapExceeded with 402 spending_cap_exceeded saying when room frees up", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-22T10:00:00Z"));
    const roomAt = BigInt(Date.parse("2026-11-22T10:20:00Z") / 1000);
    const error = mapOpenJobRevert(revert("SpendingCapExceeded", [1_000n, 980n, 50n, roomAt]), {
      model: "m",
      tier: "max",
    });
    expect(error?.code).toBe("spending_cap_exceeded");
    expect(error?.status).toBe(402);
    expect(error?.details).toEqual({
      hourly_cap: 1_000,
      credits_locked_last_hour: 980,
      credits_required: 50,
      room_at: "2026-11-22T10:20:00.000Z",
      retry_after: 1_200,
    });
    expect(error?.headers["retry-after"]).toBe("1200");
  });

  it("says the room never frees up for a request larger than the cap itself", () => {
    const error = mapOpenJobRevert(revert("SpendingCapExceeded", [100n, 0n, 500n, 0n]), { model: "m", tier: "max" });
    expect(error?.details).toMatchObject({ room_at: null, retry_after: null });
    expect(error?.headers["retry-after"]).toBeUndefined();
  });
});
