import { ApiError } from "../errors/ApiError.js";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import { KEY_STATUSES } from "@credit-metered/client";
import type { OpenSkipReason } from "./lockBatcher.js";
import { revertOf } from "./revertOf.js";

interface RefusalContext {
  model: string;
  tier: string;
  /** The credits the lock needed; a skipped lock's answer names them (its reason carries no figures). */
  creditsRequired?: number;
}

/**
 * The spec's answer to each refusal of a lock, by the escrow's error name. `args` are the revert's arguments, or
 * undefined when only the reason is known (`openJobBatch` skipped the lock; see EscrowChain.openJobRevertAt),
 * in which case the figures the revert would have carried are unknown.
 */
const ANSWER_OF: Record<string, (args: readonly unknown[] | undefined, context: RefusalContext) => ApiError> = {
  KeyNotActive: (args) => {
    const status = args ? KEY_STATUSES[Number(args[1] ?? 0)] : undefined;
    return new ApiError(status === "suspended" ? "key_suspended" : "invalid_api_key");
  },
  WalletSuspended: () => new ApiError("key_suspended"),
  InsufficientCredits: (args, context) => {
    if (!args) {
      return new ApiError("insufficient_credits", {
        details: { credits_remaining: 0, credits_required: context.creditsRequired ?? null, tier: context.tier },
      });
    }
    const available = Number(args[1] ?? 0n);
    const required = Number(args[2] ?? 0n);
    return new ApiError("insufficient_credits", {
      details: { credits_remaining: available, credits_required: required, tier: context.tier },
      headers: { "x-service-credits-remaining": String(available) },
    });
  },
  SpendingCapExceeded: (args, context) => {
    if (!args) {
      return new ApiError("spending_cap_exceeded", {
        details: {
          hourly_cap: null,
          credits_locked_last_hour: null,
          credits_required: context.creditsRequired ?? null,
          room_at: null,
          retry_after: null,
        },
      });
    }
    // (wallet, cap, lockedInWindow, requested, roomAt): roomAt is the block time at which this lock fits again
    // (zero when it exceeds the cap by itself and never will).
    const cap = Number(args[1] ?? 0n);
    const locked = Number(args[2] ?? 0n);
    const required = Number(args[3] ?? 0n);
    const roomAt = Number(args[4] ?? 0n);
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
  },
  ModelUnknown: (_args, context) => modelNotFound(context),
  ModelIsRetired: (_args, context) => modelNotFound(context),
  ModelNotListed: (_args, context) => modelNotFound(context),
  MaxTokensInvalid: () =>
    new ApiError("invalid_request", { param: "max_tokens", message: "max_tokens is outside what a job can price." }),
  EnforcedPause: () => new ApiError("service_unavailable", { message: "Settlement is paused on chain. Retry later." }),
};

/** The escrow error each `JobOpenSkipped` reason stands for (ICreditEscrow.OpenSkipReason). */
const ERROR_OF_SKIP: Partial<Record<OpenSkipReason, string>> = {
  key_not_active: "KeyNotActive",
  insufficient_credits: "InsufficientCredits",
  spending_cap_exceeded: "SpendingCapExceeded",
  model_not_listed: "ModelNotListed",
  max_tokens_invalid: "MaxTokensInvalid",
};

/** The answer for an escrow error name, if it is one the spec answers (own keys only: `constructor` is none). */
function answerFor(name: string | undefined) {
  return name !== undefined && Object.hasOwn(ANSWER_OF, name) ? ANSWER_OF[name] : undefined;
}

function modelNotFound(context: RefusalContext): ApiError {
  return new ApiError("model_not_found", { param: "model", message: `The model '${context.model}' does not exist.` });
}

/**
 * Turns an openJob revert into the spec's answer. The escrow is the last word: a key revoked or suspended after
 * the gateway's own check, a balance spent by a concurrent request, a model retired a moment ago.
 */
export function mapOpenJobRevert(error: unknown, context: { model: string; tier: string }): ApiError | undefined {
  const revert = revertOf(error);
  const answer = answerFor(revert?.name);
  return revert && answer ? answer(revert.args, context) : undefined;
}

/**
 * The answer for a lock `openJobBatch` skipped, from its reason code alone: used when the refusal can no longer
 * be replayed as an `openJob` revert (which carries the figures; see EscrowChain.openJobRevertAt).
 */
export function mapSkippedLock(
  reason: OpenSkipReason,
  context: { model: string; tier: string; creditsRequired: number },
): ApiError {
  const answer = answerFor(ERROR_OF_SKIP[reason]);
  return answer ? answer(undefined, context) : serviceUnavailable("The escrow did not take the lock. Retry shortly.");
}
