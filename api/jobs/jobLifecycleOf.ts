import type { Logger } from "pino";
import type { Hex } from "viem";
import type { EscrowChain } from "../chain/escrowChain.js";
import { revertOf } from "../chain/revertOf.js";
import type { SettlementBatcher } from "../chain/settlementBatcher.js";
import type { GatewayConfig } from "../config.js";
import { JobLifecycle, type JobChainActions } from "./jobLifecycle.js";
import type { JobStore } from "./jobStore.js";

/**
 * Waits until the chain will accept `refund` for a job whose deadline is `deadline` (unix seconds). Production
 * waits for wall-clock time to pass it; tests plug in `evm_increaseTime` so they need not wait 120 s.
 */
export type WaitForChainDeadline = (deadline: bigint) => Promise<void>;

/** What the production chain actions are made of: the escrow contract, the settlement batcher, the deadline wait. */
export interface ChainActionsDeps {
  chain: Pick<
    EscrowChain,
    "failJob" | "refund" | "sender" | "settledJobOf" | "jobOf" | "blockNumber" | "blockHashAt" | "refundTxOf"
  >;
  batcher: Pick<SettlementBatcher, "enqueue">;
  waitForChainDeadline: WaitForChainDeadline;
}

/** What the running gateway's lifecycle is built from. */
export interface LifecycleDeps extends ChainActionsDeps {
  jobs: JobStore;
  logger: Logger;
  config: Pick<GatewayConfig, "JOB_TIMEOUT_MS" | "ESCROW_UNSENT_GRACE_MS" | "CHAIN_FINALITY_DEPTH">;
  /** The escrow's job timeout, seconds (the deployment's `params.jobTimeout`). */
  chainJobTimeoutSeconds: number;
}

/** A sent escrow transaction that has not been mined after this long is taken as dropped. */
const UNMINED_GRACE_MS = 5 * 60_000;
/** A stored receipt whose settlement has not shown up after this long is sent again. */
const SETTLEMENT_RETRY_AFTER_MS = 30_000;

/** The production chain actions: the escrow contract through the gateway's signer, settlements via the batcher. */
export function chainActionsOf(deps: ChainActionsDeps): JobChainActions {
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
          blockHash: txReceipt.blockHash,
          ...(facts ? { creditsCharged: facts.creditsCharged } : {}),
        };
      });
      // Nobody may be awaiting `mined` (non-streaming answers wait for `submitted` only).
      mined.catch(() => undefined);
      return { submitted: ticket.submitted, mined };
    },
    jobOf: (jobKey) => deps.chain.jobOf(jobKey),
    headBlock: () => deps.chain.blockNumber(),
    blockHashAt: (blockNumber) => deps.chain.blockHashAt(blockNumber),
    waitForDeadline: (deadline) => deps.waitForChainDeadline(deadline),
    refundTxOf: (jobKey) => deps.chain.refundTxOf(jobKey),
    refusalOf: (error) => revertOf(error)?.name,
  };
}

/** The lifecycle of a running gateway, built once by `api/main.ts`. */
export function createJobLifecycle(deps: LifecycleDeps): JobLifecycle {
  return new JobLifecycle({
    jobs: deps.jobs,
    chain: chainActionsOf(deps),
    logger: deps.logger,
    gatewayTimeoutMs: deps.config.JOB_TIMEOUT_MS,
    chainTimeoutMs: deps.chainJobTimeoutSeconds * 1000,
    settlementRetryAfterMs: SETTLEMENT_RETRY_AFTER_MS,
    unsentGraceMs: deps.config.ESCROW_UNSENT_GRACE_MS,
    unminedGraceMs: UNMINED_GRACE_MS,
    finalityDepth: deps.config.CHAIN_FINALITY_DEPTH,
  });
}
