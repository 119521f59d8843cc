import type { Receipt as ChainReceipt } from "@credit-metered/client";
import type { WorkerReceipt } from "../workerPool/workerProtocol.js";

/** A receipt as the gateway keeps it (JSON numbers, as on the worker protocol and in gateway_job.receipt). */
export type Receipt = WorkerReceipt;

/** The receipt as the contract and the EIP-712 helpers take it (uint64 as bigint). */
export function receiptArg(receipt: Receipt): ChainReceipt {
  return {
    jobId: receipt.jobId as ChainReceipt["jobId"],
    outputHash: receipt.outputHash as ChainReceipt["outputHash"],
    promptTokens: receipt.promptTokens,
    completionTokens: receipt.completionTokens,
    finalTokenAt: BigInt(receipt.finalTokenAt),
  };
}
