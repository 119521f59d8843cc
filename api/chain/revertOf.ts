import { BaseError, ContractFunctionRevertedError } from "viem";

export interface Revert {
  /** Custom error name, e.g. `KeyNotActive`. */
  name: string;
  args: readonly unknown[];
}

/** The decoded custom error of a reverted call or estimate, if viem could decode one. */
export function revertOf(error: unknown): Revert | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
    return { name: reverted.data.errorName, args: reverted.data.args ?? [] };
  }
  return undefined;
}
