import { ContractFunctionRevertedError, encodeErrorResult, zeroAddress } from "viem";
import { afterEach, describe, expect, it, vi } from "vitest";
import { creditEscrowAbi } from "./abis.js";
import { mapOpenJobRevert, mapSkippedLock } from "./mapOpenJobRevert.js";

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

describe("mapSkippedLock (a JobOpenSkipped reason without the revert's figures)", () => {
  const context = { model: "qwen3-1.7b", tier: "lite", creditsRequired: 7 };
  it.each([
    ["key_not_active", "invalid_api_key"],
    ["insufficient_credits", "insufficient_credits"],
    ["spending_cap_exceeded", "spending_cap_exceeded"],
    ["model_not_listed", "model_not_found"],
    ["max_tokens_invalid", "invalid_request"],
    ["job_exists", "service_unavailable"],
  ] as const)("%s answers %s", (reason, code) => {
    expect(mapSkippedLock(reason, context).code).toBe(code);
  });

  it("insufficient_credits names the credits the lock needed and the tier", () => {
    expect(mapSkippedLock("insufficient_credits", context).details).toMatchObject({
      credits_required: 7,
      tier: "lite",
    });
  });
});
