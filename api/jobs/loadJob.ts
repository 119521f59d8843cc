import type { Hex } from "viem";
import type { GatewayDeps } from "../deps.js";
import type { IndexedJob } from "../index/indexReader.js";
import type { GatewayJobRow } from "./jobStore.js";
import { toJobResource, type JobResource } from "./toJobResource.js";

const JOB_ID_PATTERN = /^job_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export interface LoadedJob {
  resource: JobResource;
  indexed: IndexedJob | undefined;
  local: GatewayJobRow | undefined;
}

/** A job of `keyHash`, or undefined — another key's job is as absent as a job that never existed. */
export async function loadJob(deps: GatewayDeps, keyHash: Hex, jobId: string): Promise<LoadedJob | undefined> {
  if (!JOB_ID_PATTERN.test(jobId)) return undefined;
  const [indexed, local] = await Promise.all([deps.index.jobById(jobId), deps.jobs.get(jobId)]);
  const owner = indexed?.keyHash ?? local?.key_hash;
  if (!owner || owner.toLowerCase() !== keyHash.toLowerCase()) return undefined;
  if (!indexed && !local?.escrow_tx) return undefined;
  return { resource: toJobResource(indexed, local, deps.chain.escrowAddress), indexed, local };
}
