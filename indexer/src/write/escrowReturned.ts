import type { Hex } from "viem";
import { changeAccount } from "./account.js";
import { recordChainEvent } from "./chainEvent.js";
import { changeJob } from "./job.js";
import type { Db, LogPosition } from "./types.js";

export type EscrowReturn = {
  name: "JobFailed" | "JobRefunded";
  status: "failed" | "refunded";
  /** The job column that keeps the closing transaction. */
  txColumn: "failTx" | "refundTx";
  jobKey: Hex;
  wallet: Hex;
  credits: bigint;
  balanceAfter: bigint;
  /** The event's own facts for the webhook log, besides the ones every returned escrow has. */
  data: Record<string, unknown>;
};

/** A job closed before settlement (failed or refunded after its deadline): its whole escrow is back in the balance. */
export async function projectEscrowReturn(db: Db, chainId: number, event: LogPosition, r: EscrowReturn) {
  const opened = await changeJob(db, r.jobKey, {
    status: r.status,
    creditsRefunded: r.credits,
    balanceAfter: r.balanceAfter,
    completedAt: event.block.timestamp,
    [r.txColumn]: event.transaction.hash,
  });
  await changeAccount(db, r.wallet, (row) => ({
    creditsAvailable: r.balanceAfter,
    creditsLocked: row.creditsLocked - opened.creditsLocked,
  }));
  await recordChainEvent(db, chainId, event, {
    name: r.name,
    wallet: r.wallet,
    jobKey: r.jobKey,
    data: {
      jobId: opened.id,
      jobKey: r.jobKey,
      wallet: r.wallet,
      modelId: opened.modelId,
      tier: opened.tier,
      ...r.data,
      balanceAfter: r.balanceAfter,
      [r.txColumn]: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
}
