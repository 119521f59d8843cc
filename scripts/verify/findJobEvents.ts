import { isHex, type Hex } from "viem";
import {
  isJobId,
  isJobIdBytes32,
  jobIdToBytes32,
  decodeProductLogs,
  hexArg,
  type ProductEvent,
} from "@credit-metered/client";
import type { ChainReader } from "./chainReader.js";
import { logsByTopics } from "./logsByTopics.js";

/** Every product event of one job, in chain order, and the receipts' logs of the transactions they are in. */
export interface JobEvents {
  jobKey: Hex;
  events: ProductEvent[];
  /** All product events of each transaction that touched the job (transfers and batch siblings included). */
  txEvents: Map<Hex, ProductEvent[]>;
}

export class VerifyInputError extends Error {
  override name = "VerifyInputError";
}

/** The job key of a `job_…` id, a bytes32 job key, or the first job in a product transaction. */
export async function resolveJobKey(reader: ChainReader, target: string): Promise<Hex> {
  if (isJobId(target)) return jobIdToBytes32(target);
  if (!isHex(target) || target.length !== 66) {
    throw new VerifyInputError(`not a job id (job_…) or a transaction hash: ${target}`);
  }
  if (isJobIdBytes32(target)) {
    // A bytes32 that looks like a job key may still be a transaction hash (high bytes zero is unlikely for one).
    return target;
  }
  const receipt = await reader.client.getTransactionReceipt({ hash: target }).catch(() => undefined);
  if (!receipt) throw new VerifyInputError(`transaction ${target} is not on this chain`);
  const events = decodeProductLogs(reader.deployment.contracts, receipt.logs);
  const withJob = events.find((event) => typeof event.args["jobId"] === "string");
  if (!withJob) throw new VerifyInputError(`transaction ${target} is not a job transaction of this deployment`);
  return hexArg(withJob, "jobId");
}

/** Reads the job's events from the escrow and the dispute manager (from the deployment's start block). */
export async function findJobEvents(reader: ChainReader, jobKey: Hex): Promise<JobEvents> {
  const { contracts } = reader.deployment;
  // Every escrow and dispute event indexes the job id first (topic 1).
  const [escrowLogs, disputeLogs] = await Promise.all([
    logsByTopics(reader, contracts.creditEscrow, [null, jobKey]),
    logsByTopics(reader, contracts.disputeManager, [null, jobKey]),
  ]);
  // Other events may carry a different value in topic 1: keep exactly this job's.
  const logs = [...escrowLogs, ...disputeLogs];
  const events = decodeProductLogs(contracts, logs)
    .filter((event) => String(event.args["jobId"]).toLowerCase() === jobKey.toLowerCase())
    .sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : Number(a.blockNumber - b.blockNumber),
    );
  const txEvents = new Map<Hex, ProductEvent[]>();
  for (const hash of new Set(events.map((event) => event.transactionHash))) {
    const receipt = await reader.client.getTransactionReceipt({ hash });
    txEvents.set(hash, decodeProductLogs(contracts, receipt.logs));
  }
  return { jobKey, events, txEvents };
}
