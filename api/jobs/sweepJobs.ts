import type { Logger } from "pino";
import type { EscrowChain } from "../chain/escrowChain.js";
import type { IndexReader } from "../readModel/indexReader.js";
import type { GatewayLeases } from "./gatewayLeases.js";
import type { JobLifecycle } from "./jobLifecycle.js";
import type { JobStore } from "./jobStore.js";

/** What the sweep reads and who closes: the lifecycle decides each row, the rest only finds the rows. */
export interface SweepDeps {
  lifecycle: Pick<JobLifecycle, "reconcile" | "confirmFinality" | "refundExpired" | "returnOrphanLock">;
  jobs: Pick<JobStore, "listOpen" | "listUnfinal" | "withoutRows">;
  chain: Pick<EscrowChain, "blockNumber" | "latestBlockTimestamp" | "senderOf">;
  index: Pick<IndexReader, "expiredOpenJobs" | "openJobsLockedBefore">;
  /** Locks without a row are returned once this old on chain (ORPHAN_LOCK_GRACE_MS), if one of `signers` sent them. */
  orphanLockGraceMs: number;
  /** The signers of this deployment's gateways (a lock another deployment sent is not this one's to return). */
  signers: () => Promise<ReadonlySet<string>>;
  /** Jobs this process is running right now: left alone. */
  activeJobs: ReadonlySet<string>;
  /** Several gateways on one database: only this gateway's own rows are closed. */
  leases?: Pick<GatewayLeases, "mayClose">;
  logger: Logger;
}

/**
 * Recovery and the background sweep (ARCHITECTURE "Timeouts and failures": nothing stays locked). Each job left
 * open that this process is not running is reconciled by the lifecycle (jobLifecycle.ts `reconcile`): a stored
 * verified receipt is settled; without one the escrow is refunded once the chain deadline has passed. Expired open
 * jobs the index knows about are refunded too (a failJob that was never sent, another replica's leftovers); a lock
 * of this deployment whose row never committed is failed once past its grace (returnOrphanLocks), long before that.
 */
export async function sweepJobs(deps: SweepDeps): Promise<void> {
  const lifecycle = deps.lifecycle;
  const chainNow = await chainTime(deps);
  const seen = new Set<string>();
  for (const row of await deps.jobs.listOpen()) {
    seen.add(row.job_id);
    if (deps.activeJobs.has(row.job_id)) continue;
    // Another live gateway's job (docs/DESIGN.md, "Several gateways"): it closes it, or takes it over when dead.
    if (deps.leases && !deps.leases.mayClose(row)) continue;
    try {
      await lifecycle.reconcile(row, chainNow);
    } catch (error) {
      deps.logger.error({ err: error, job_id: row.job_id }, "sweep failed for job");
    }
  }
  await confirmFinality(deps);
  await returnOrphanLocks(deps, chainNow);
  try {
    for (const job of await deps.index.expiredOpenJobs(chainNow)) {
      if (deps.activeJobs.has(job.id) || seen.has(job.id)) continue;
      await lifecycle.refundExpired(job.jobKey, job.deadline);
    }
  } catch (error) {
    deps.logger.warn({ err: error }, "sweep of expired indexed jobs failed");
  }
}

/**
 * Locks whose job row never committed: a gateway killed after its lock left but before its row's insert committed
 * (openEscrow.ts writes them side by side). Nobody holds such a job, so before this its credits stayed locked until
 * the chain deadline (the refund below). A live gateway's row is committed within its insert's query timeout, far
 * less than the grace, and a row whose insert failed has its lock returned by its own gateway (returnLateLock): so a
 * lock this deployment sent that is older than the grace and has no row is an orphan, returned at once.
 */
async function returnOrphanLocks(deps: SweepDeps, chainNow: bigint): Promise<void> {
  try {
    const lockedBefore = chainNow - BigInt(Math.ceil(deps.orphanLockGraceMs / 1000));
    const open = await deps.index.openJobsLockedBefore(lockedBefore, chainNow);
    const rowless = new Set(await deps.jobs.withoutRows(open.map((job) => job.id)));
    if (rowless.size === 0) return;
    const signers = await deps.signers();
    for (const job of open) {
      if (!rowless.has(job.id) || deps.activeJobs.has(job.id)) continue;
      const sender = await deps.chain.senderOf(job.escrowTx).catch(() => undefined);
      if (sender === undefined || !signers.has(sender)) continue;
      deps.logger.warn({ job_id: job.id, escrow_tx: job.escrowTx }, "lock without a job row; returning it");
      await deps.lifecycle.returnOrphanLock(job.jobKey);
    }
  } catch (error) {
    deps.logger.warn({ err: error }, "sweep of locks without a row failed");
  }
}

/** Settled rows checked for finality per sweep (one chain read each), oldest first. */
const FINALITY_CHECKS_PER_SWEEP = 500;

/**
 * Finality (docs/DESIGN.md "Finality"): settled rows become final once their settlement is buried
 * CHAIN_FINALITY_DEPTH blocks deep on the canonical chain; a row whose settlement a reorg removed is settled again
 * (jobLifecycle.ts `confirmFinality`). Rows of a live peer are its own to check.
 */
async function confirmFinality(deps: SweepDeps): Promise<void> {
  try {
    const head = await deps.chain.blockNumber();
    for (const row of await deps.jobs.listUnfinal(FINALITY_CHECKS_PER_SWEEP)) {
      if (deps.activeJobs.has(row.job_id)) continue;
      if (deps.leases && !deps.leases.mayClose(row)) continue;
      try {
        await deps.lifecycle.confirmFinality(row, head);
      } catch (error) {
        deps.logger.warn({ err: error, job_id: row.job_id }, "finality check failed for job");
      }
    }
  } catch (error) {
    deps.logger.warn({ err: error }, "finality sweep failed");
  }
}

async function chainTime(deps: SweepDeps): Promise<bigint> {
  const wall = BigInt(Math.floor(Date.now() / 1000));
  try {
    const block = await deps.chain.latestBlockTimestamp();
    return block > wall ? block : wall;
  } catch {
    return wall;
  }
}
