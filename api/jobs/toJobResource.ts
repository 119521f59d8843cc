import type { Address } from "viem";
import { JOB_STATES, creditsToUsdg, toProofHash, type JobState } from "@credit-metered/client";
import type { IndexedJob } from "../readModel/indexReader.js";
import type { GatewayJobRow } from "./jobStore.js";

import type { JobResource } from "@credit-metered/client/http";
export { JOB_STATES, type JobResource, type JobState };

/**
 * The job's state as the API reports it. The index is the word on what the chain decided; the gateway's own
 * row adds what the chain never sees (`processing`, `settling`) and what it has not indexed yet.
 */
export function jobStateOf(indexed: IndexedJob | undefined, local: GatewayJobRow | undefined): JobState {
  if (indexed && indexed.status !== "pending") {
    // A timeout the gateway resolved with failJob (its timeout shorter than the chain's) is a refund to the client.
    if (indexed.status === "failed" && local?.timed_out) return "refunded";
    // Read-your-write: the dispute this gateway opened is mined but not indexed yet. Once the index has the
    // dispute (`disputeTx`), it is the word again, so a rejected or upheld dispute shows its outcome.
    if (indexed.status === "settled" && indexed.disputeTx == null && local?.status === "disputed") return "disputed";
    return isJobState(indexed.status) ? indexed.status : "failed";
  }
  if (!local) return "pending";
  // Settlement mined but not indexed yet: still `settling` until the index has the facts `on_chain` shows.
  if (local.status === "settled") return "settling";
  return local.status;
}

function isJobState(value: string): value is JobState {
  return (JOB_STATES as readonly string[]).includes(value);
}

export function toJobResource(
  indexed: IndexedJob | undefined,
  local: GatewayJobRow | undefined,
  escrowAddress: Address,
): JobResource {
  const base = indexed ?? local;
  if (!base) throw new Error("toJobResource needs at least one source");
  const status = jobStateOf(indexed, local);
  const creditsCharged = Number(indexed?.creditsCharged ?? 0n);
  const promptTokens = indexed?.promptTokens ?? local?.prompt_tokens ?? 0;
  const completionTokens = indexed?.completionTokens ?? local?.completion_tokens ?? 0;
  const createdAt = indexed ? new Date(Number(indexed.createdAt) * 1000) : local!.created_at;
  const completedAt =
    indexed?.completedAt != null ? new Date(Number(indexed.completedAt) * 1000) : (local?.completed_at ?? null);
  const resource: JobResource = {
    id: indexed?.id ?? local!.job_id,
    object: "job",
    status,
    model: indexed?.modelId ?? local!.model,
    // Both sources hold the catalog's tier name of the job's model (written from ModelCatalog).
    tier: (indexed?.tier ?? local!.tier) as JobResource["tier"],
    credits_charged: creditsCharged,
    usdg_value: creditsToUsdg(creditsCharged),
    worker_address: indexed?.worker ?? local?.worker ?? null,
    created_at: createdAt.toISOString(),
    completed_at: completedAt ? completedAt.toISOString() : null,
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
  // Spec: `on_chain` is shown for settled jobs only (and stays for a settled job under dispute).
  if (indexed?.settlementTx && indexed.outputHash && indexed.settlementBlock != null) {
    resource.on_chain = {
      escrow_tx: indexed.escrowTx,
      settlement_tx: indexed.settlementTx,
      escrow_address: escrowAddress,
      block_number: Number(indexed.settlementBlock),
      proof_hash: toProofHash(indexed.outputHash),
    };
  }
  return resource;
}
