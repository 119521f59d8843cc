import { BaseError, ContractFunctionRevertedError, UserRejectedRequestError } from "viem";
import { AppApiError } from "../appApi";

/** Custom errors of the contracts, in plain words. */
const REVERTS: Record<string, string> = {
  DepositTooSmall: "The deposit is below the minimum of 1 USDG.",
  AmountNotWholeCredits: "The amount must be a whole number of credits (multiples of 0.01 USDG).",
  InsufficientCredits: "Your available credits do not cover this.",
  KeyAlreadyRegistered: "This wallet already has an active key: rotate it instead.",
  KeyHashAlreadyUsed: "This key was registered before. Generate a new one.",
  NoActiveKey: "This wallet has no active key.",
  WalletSuspended: "This wallet's key is suspended by an operator; it cannot register or rotate a key.",
  EnforcedPause: "The service is paused for maintenance. Deposits and jobs resume shortly.",
  ERC2612ExpiredSignature: "The permit signature expired. Try again.",
  ERC2612InvalidSigner: "The permit signature does not match your wallet.",
  ERC20InsufficientBalance: "Your wallet does not hold enough USDG for this deposit.",
};

/** An error from the wallet, the chain or the backend, as a sentence a person can act on. */
export function plainError(error: unknown): string {
  if (error instanceof AppApiError) {
    if (error.code === "app_session_required") return "Your session has ended. Sign in again.";
    return error.message;
  }
  if (error instanceof BaseError) {
    if (error.walk((e) => e instanceof UserRejectedRequestError)) return "You declined the request in your wallet.";
    const revert = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) {
      const name = revert.data?.errorName ?? "";
      return REVERTS[name] ?? `The chain refused the transaction${name ? ` (${name})` : ""}.`;
    }
    if (/insufficient funds/i.test(error.message)) return "Your wallet has no ETH left to pay for gas.";
    if (/fetch|network|HTTP request failed/i.test(error.message)) {
      return "The chain cannot be reached right now. Try again in a moment.";
    }
    return error.shortMessage;
  }
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}
