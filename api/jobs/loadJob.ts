import { JOB_ID_PATTERN } from "@credit-metered/client";
import type { Hex } from "viem";
import type { EscrowChain } from "../chain/escrowChain.js";
import type { GatewayConfig } from "../config.js";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import { IndexUnavailableError } from "../readModel/indexClient.js";
import type { IndexLagMonitor } from "../readModel/indexLag.js";
import type { IndexedJob, IndexReader } from "../readModel/indexReader.js";
import type { GatewayJobRow, JobStore } from "./jobStore.js";
import { toJobResource, type JobResource } from "./toJobResource.js";

/** What reading jobs uses: the index (or its last known rows), the gateway's own rows, and how stale the index is. */
export interface JobReadDeps {
  index: Pick<IndexReader, "jobById" | "jobsForKey" | "lastKnownJob" | "unavailableSince">;
  indexLag: Pick<IndexLagMonitor, "snapshot">;
  jobs: Pick<JobStore, "get" | "listForKey">;
  chain: Pick<EscrowChain, "escrowAddress">;
  config: Pick<GatewayConfig, "INDEX_STALE_MAX_MS">;
}

export interface LoadedJob {
  resource: JobResource;
  indexed: IndexedJob | undefined;
  local: GatewayJobRow | undefined;
  /** How old the chain facts shown may be, in seconds (index lag, or the age of the last known row). */
  staleSeconds: number;
}

/**
 * A job of `keyHash`, or undefined — another key's job is as absent as a job that never existed. While the index
 * does not answer, the job is built from the gateway's own row and the last indexed row read; a job known to
 * neither is 503 `service_unavailable` (it may exist), never a wrong 404.
 */
export async function loadJob(deps: JobReadDeps, keyHash: Hex, jobId: string): Promise<LoadedJob | undefined> {
  if (!JOB_ID_PATTERN.test(jobId)) return undefined;
  const [indexedRead, local] = await Promise.all([
    deps.index.jobById(jobId).then(
      (row) => ({ row, staleSeconds: deps.indexLag.snapshot().lagSeconds ?? 0 }),
      (error: unknown) => {
        if (!(error instanceof IndexUnavailableError)) throw error;
        return undefined;
      },
    ),
    deps.jobs.get(jobId),
  ]);
  let indexed = indexedRead?.row;
  let staleSeconds = indexedRead?.staleSeconds ?? 0;
  if (!indexedRead) {
    const known = deps.index.lastKnownJob(jobId, deps.config.INDEX_STALE_MAX_MS);
    if (!known && !local) throw serviceUnavailable("The job cannot be read from the index right now. Retry shortly.");
    indexed = known?.row;
    staleSeconds = indexUnavailableSeconds(deps, known?.ageMs);
  }
  const owner = indexed?.keyHash ?? local?.key_hash;
  if (!owner || owner.toLowerCase() !== keyHash.toLowerCase()) return undefined;
  // A row whose escrow was never sent (refused) is not a job. `escrow_tx` is a group-committed fact (jobStore.ts),
  // so a running job may not have it written yet: only a closed row without it is absent.
  if (!indexed && (!local || (!local.escrow_tx && local.status === "failed"))) return undefined;
  return { resource: toJobResource(indexed, local, deps.chain.escrowAddress), indexed, local, staleSeconds };
}

/** Seconds the index's facts may be behind when it does not answer: since it stopped, or the row's own age. */
export function indexUnavailableSeconds(deps: Pick<JobReadDeps, "index" | "indexLag">, rowAgeMs?: number): number {
  const since = deps.index.unavailableSince;
  const downFor = since === undefined ? 0 : (Date.now() - since) / 1000;
  return Math.max(1, downFor, (rowAgeMs ?? 0) / 1000, deps.indexLag.snapshot().lagSeconds ?? 0);
}
