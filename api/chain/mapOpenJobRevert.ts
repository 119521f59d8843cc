import { ApiError } from "../errors/ApiError.js";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import { KEY_STATUSES } from "@credit-metered/client";
import type { OpenSkipReason } from "./lockBatcher.js";
import { revertOf } from "./revertOf.js";

/**
 * Turns an openJob revert into the spec's answer. The escrow is the last word: a key revoked or suspended after
 * the gateway's own check, a balance spent by a concurrent request, a model retired a moment ago.
 */
export function mapOpenJobRevert(error: unknown, context: { model: string; tier: string }): ApiError | undefined {
  const revert = revertOf(error);
  if (!revert) return undefined;
  switch (revert.name) {
    case "KeyNotActive": {
      const status = KEY_STATUSES[Number(revert.args[1] ?? 0)];
      return new ApiError(status === "suspended" ? "key_suspended" : "invalid_api_key");
    }
    case "WalletSuspended":
      return new ApiError("key_suspended");
    case "InsufficientCredits": {
      const available = Number(revert.args[1] ?? 0n);
      const required = Number(revert.args[2] ?? 0n);
      return new ApiError("insufficient_credits", {
        details: { credits_remaining: available, credits_required: required, tier: context.tier },
        headers: { "x-service-credits-remaining": String(available) },
      });
    }
    case "SpendingCapExceeded": {
      // (wallet, cap, lockedInWindow, requested, roomAt): roomAt is the block time at which this lock fits again
      // (zero when it exceeds the cap by itself and never will).
      const cap = Number(revert.args[1] ?? 0n);
      const locked = Number(revert.args[2] ?? 0n);
      const required = Number(revert.args[3] ?? 0n);
      const roomAt = Number(revert.args[4] ?? 0n);
      const retryAfter = roomAt === 0 ? null : Math.max(0, roomAt - Math.floor(Date.now() / 1000));
      return new ApiError("spending_cap_exceeded", {
        details: {
          hourly_cap: cap,
          credits_locked_last_hour: locked,
          credits_required: required,
          room_at: roomAt === 0 ? null : new Date(roomAt * 1000).toISOString(),
          retry_after: retryAfter,
        },
        ...(retryAfter === null ? {} : { headers: { "retry-after": String(retryAfter) } }),
      });
    }
    case "ModelUnknown":
    case "ModelIsRetired":
    case "ModelNotListed":
      return new ApiError("model_not_found", {
        param: "model",
        message: `The model '${context.model}' does not exist.`,
      });
    case "MaxTokensInvalid":
      return new ApiError("invalid_request", {
        param: "max_tokens",
        message: "max_tokens is outside what a job can price.",
      });
    case "EnforcedPause":
      return new ApiError("service_unavailable", { message: "Settlement is paused on chain. Retry later." });
    default:
      return undefined;
  }
}

/**
 * The answer for a lock `openJobBatch` skipped, from its reason code alone: used when the refusal can no longer
 * be replayed as an `openJob` revert (which carries the figures; see EscrowChain.openJobRevertAt).
 */
export function mapSkippedLock(
  reason: OpenSkipReason,
  context: { model: string; tier: string; creditsRequired: number },
): ApiError {
  switch (reason) {
    case "key_not_active":
      return new ApiError("invalid_api_key");
    case "insufficient_credits":
      return new ApiError("insufficient_credits", {
        details: { credits_remaining: 0, credits_required: context.creditsRequired, tier: context.tier },
      });
    case "spending_cap_exceeded":
      return new ApiError("spending_cap_exceeded", {
        details: {
          hourly_cap: null,
          credits_locked_last_hour: null,
          credits_required: context.creditsRequired,
          room_at: null,
          retry_after: null,
        },
      });
    case "model_not_listed":
      return new ApiError("model_not_found", {
        param: "model",
        message: `The model '${context.model}' does not exist.`,
      });
    case "max_tokens_invalid":
      return new ApiError("invalid_request", {
        param: "max_tokens",
        message: "max_tokens is outside what a job can price.",
      });
    default:
      return serviceUnavailable("The escrow did not take the lock. Retry shortly.");
  }
}
