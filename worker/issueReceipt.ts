import type { Hex, LocalAccount } from "viem";
import type { FaultMode } from "./config.js";
import { outputHashOf } from "./receipt/outputHashOf.js";
import type { EscrowDomain, Receipt } from "./receipt/receiptTypes.js";
import { signReceipt } from "./receipt/signReceipt.js";

export type IssueReceiptParams = {
  jobIdBytes32: Hex;
  escrow: EscrowDomain;
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
): Promise<{ receipt: Receipt; signature: Hex }> {
  const hashedText = fault === "wrong_hash" ? `${params.text} [not what was sent]` : params.text;
  const receipt: Receipt = {
    jobId: params.jobIdBytes32,
    outputHash: outputHashOf(hashedText),
    promptTokens: params.promptTokens,
    completionTokens: params.completionTokens,
    finalTokenAt: params.finalTokenAt,
  };
  return { receipt, signature: await signReceipt(account, params.escrow, receipt) };
}
