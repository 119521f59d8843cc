import { ApiError } from "../errors/ApiError.js";
import { CHAIN_KEY_STATUS } from "./escrowChain.js";
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
      const status = CHAIN_KEY_STATUS[Number(revert.args[1] ?? 0)];
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
