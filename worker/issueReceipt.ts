import type { Hex, LocalAccount } from "viem";
import { outputHashOf, receiptToJson, signReceipt, type ReceiptDomainParams } from "@credit-metered/client";
import type { FaultMode } from "./config.js";

/** A receipt as it travels in the protocol's JSON (numbers only). */
export type ReceiptJson = ReturnType<typeof receiptToJson>;

export type IssueReceiptParams = {
  jobIdBytes32: Hex;
  escrow: ReceiptDomainParams;
  text: string;
  promptTokens: number;
  completionTokens: number;
  finalTokenAt: number;
};

/** Builds and signs the receipt for an emitted text. The `wrong_hash` fault signs the hash of other text. */
export async function issueReceipt(
  account: LocalAccount,
  fault: FaultMode,
  params: IssueReceiptParams,
): Promise<{ receipt: ReceiptJson; signature: Hex }> {
  const hashedText = fault === "wrong_hash" ? `${params.text} [not what was sent]` : params.text;
  const receipt = {
    jobId: params.jobIdBytes32,
    outputHash: outputHashOf(hashedText),
    promptTokens: params.promptTokens,
    completionTokens: params.completionTokens,
    finalTokenAt: BigInt(params.finalTokenAt),
  };
  return { receipt: receiptToJson(receipt), signature: await signReceipt(account, params.escrow, receipt) };
}
