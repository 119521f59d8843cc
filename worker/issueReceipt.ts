import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { outputHashOf, receiptToJson, type Receipt, type ReceiptDomainParams } from "@credit-metered/client";
import { signReceiptWithKey } from "@credit-metered/client/node";
import type { FaultMode } from "./config.js";

/** A receipt as it travels in the protocol's JSON (numbers only). */
export type ReceiptJson = ReturnType<typeof receiptToJson>;

/** The worker's key as its receipts need it: the address the gateway checks, and a signer. */
export type ReceiptSigner = {
  address: Address;
  sign(domain: ReceiptDomainParams, receipt: Receipt): Hex;
};

/**
 * Signs on libsecp256k1 where its binding loads (the client's Node entry; ~0.07 ms per receipt against viem's
 * ~0.5 ms) with the same bytes as viem's `signTypedData`, so a receipt reads the same whichever signed it.
 */
export function receiptSignerOf(privateKey: Hex): ReceiptSigner {
  return {
    address: privateKeyToAccount(privateKey).address,
    sign: (domain, receipt) => signReceiptWithKey(privateKey, domain, receipt),
  };
}

export type IssueReceiptParams = {
  jobIdBytes32: Hex;
  escrow: ReceiptDomainParams;
  text: string;
  promptTokens: number;
  completionTokens: number;
  finalTokenAt: number;
};

/** Builds and signs the receipt for an emitted text. The `wrong_hash` fault signs the hash of other text. */
export function issueReceipt(
  signer: ReceiptSigner,
  fault: FaultMode,
  params: IssueReceiptParams,
): { receipt: ReceiptJson; signature: Hex } {
  const hashedText = fault === "wrong_hash" ? `${params.text} [not what was sent]` : params.text;
  const receipt = {
    jobId: params.jobIdBytes32,
    outputHash: outputHashOf(hashedText),
    promptTokens: params.promptTokens,
    completionTokens: params.completionTokens,
    finalTokenAt: BigInt(params.finalTokenAt),
  };
  return { receipt: receiptToJson(receipt), signature: signer.sign(params.escrow, receipt) };
}
