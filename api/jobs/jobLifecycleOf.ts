import type { Hex } from "viem";
import { revertOf } from "../chain/revertOf.js";
import type { GatewayDeps } from "../deps.js";
import { JobLifecycle, type JobChainActions } from "./jobLifecycle.js";

/** A sent escrow transaction that has not been mined after this long is taken as dropped. */
const UNMINED_GRACE_MS = 5 * 60_000;
/** A stored receipt whose settlement has not shown up after this long is sent again. */
const SETTLEMENT_RETRY_AFTER_MS = 30_000;

/** The production chain actions: the escrow contract through the gateway's signer, settlements via the batcher. */
export function chainActionsOf(deps: Pick<GatewayDeps, "chain" | "batcher" | "waitForChainDeadline">): JobChainActions {
  return {
    failJob: (jobKey) => deps.chain.failJob(jobKey),
    refund: (jobKey) => deps.chain.refund(jobKey),
    waitMined: async (hash) => {
      await deps.chain.sender.waitMined(hash);
    },
    settle(receipt, signature) {
      const ticket = deps.batcher.enqueue(receipt, signature);
      const mined = ticket.mined.then(({ hash, receipt: txReceipt }) => {
        const facts = deps.chain.settledJobOf(txReceipt, receipt.jobId as Hex);
        return {
          hash,
          blockNumber: txReceipt.blockNumber,
          ...(facts ? { creditsCharged: facts.creditsCharged } : {}),
        };
      });
      // Nobody may be awaiting `mined` (non-streaming answers wait for `submitted` only).
      mined.catch(() => undefined);
      return { submitted: ticket.submitted, mined };
    },
    jobOf: (jobKey) => deps.chain.jobOf(jobKey),
    headBlock: () => deps.chain.blockNumber(),
    waitForDeadline: (deadline) => deps.waitForChainDeadline(deadline),
    refundTxOf: (jobKey) => deps.chain.refundTxOf(jobKey),
    refusalOf: (error) => revertOf(error)?.name,
  };
}

/** The lifecycle of a running gateway, built once by `api/main.ts` (`deps.lifecycle`). */
export function createJobLifecycle(
  deps: Pick<GatewayDeps, "jobs" | "chain" | "batcher" | "waitForChainDeadline" | "logger" | "config" | "deployment">,
): JobLifecycle {
  return new JobLifecycle({
    jobs: deps.jobs,
    chain: chainActionsOf(deps),
    logger: deps.logger,
    gatewayTimeoutMs: deps.config.JOB_TIMEOUT_MS,
    chainTimeoutMs: deps.deployment.params.jobTimeout * 1000,
    settlementRetryAfterMs: SETTLEMENT_RETRY_AFTER_MS,
    unsentGraceMs: deps.config.ESCROW_UNSENT_GRACE_MS,
    unminedGraceMs: UNMINED_GRACE_MS,
    finalityDepth: deps.config.CHAIN_FINALITY_DEPTH,
  });
}
