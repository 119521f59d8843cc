import type { Address, Hex } from "viem";

/**
 * EIP-712 domain and types of a worker receipt, exactly as `CreditEscrow` verifies them (docs/DESIGN.md).
 * Worker-internal copy until the shared `contracts/client/receipt.ts` is available.
 */
export const RECEIPT_DOMAIN_NAME = "CreditEscrow";
export const RECEIPT_DOMAIN_VERSION = "1";

export const receiptTypes = {
  Receipt: [
    { name: "jobId", type: "bytes32" },
    { name: "outputHash", type: "bytes32" },
    { name: "promptTokens", type: "uint32" },
    { name: "completionTokens", type: "uint32" },
    { name: "finalTokenAt", type: "uint64" },
  ],
} as const;

/** A receipt as it travels in JSON between worker and gateway (all numbers fit in a JS number). */
export type Receipt = {
  jobId: Hex;
  outputHash: Hex;
  promptTokens: number;
  completionTokens: number;
  finalTokenAt: number;
};

export type EscrowDomain = { chainId: number; verifyingContract: Address };

export function receiptDomain(escrow: EscrowDomain) {
  return {
    name: RECEIPT_DOMAIN_NAME,
    version: RECEIPT_DOMAIN_VERSION,
    chainId: escrow.chainId,
    verifyingContract: escrow.verifyingContract,
  } as const;
}

/** The typed-data message for viem: `uint64` travels as a bigint. */
export function receiptMessage(receipt: Receipt) {
  return {
    jobId: receipt.jobId,
    outputHash: receipt.outputHash,
    promptTokens: receipt.promptTokens,
    completionTokens: receipt.completionTokens,
    finalTokenAt: BigInt(receipt.finalTokenAt),
  };
}
