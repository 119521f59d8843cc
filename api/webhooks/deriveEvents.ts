import type { ChainEventRow, IndexReader } from "./chainEventFeed.js";
import { eventIdFor } from "./eventId.js";
import type { EventName } from "@credit-metered/client/http";
import type { NewEvent } from "./recordEvent.js";

// Maps the index's chain events to webhook events. The index stores decoded args (bigints as decimal strings)
// plus derived facts (`jobId`, `modelId`, `tier`, tx hashes); see indexer/src/*.ts. Every `data` shape is
// documented in api/webhooks/README.md.

type Data = Record<string, unknown>;

/** A chain event whose data lacks what its webhook event needs (an indexer/dispatcher mismatch, not transient). */
export class ChainEventShapeError extends Error {
  override name = "ChainEventShapeError";
}

function text(data: Data, key: string): string {
  const value = data[key];
  if (value === undefined || value === null) throw new ChainEventShapeError(`chain event data lacks '${key}'`);
  return String(value);
}

function integer(data: Data, key: string): number {
  return Number(text(data, key));
}

/** Credits → stablecoin value (1 credit = 0.01), as the spec's `usdg_value` number. */
export function usdgValue(credits: number): number {
  return Math.round(credits) / 100;
}

/** `0x<64 hex>` → the API's `sha256:<64 hex>`. */
function proofHash(value: string): string {
  return `sha256:${value.replace(/^0x/, "").toLowerCase()}`;
}

function lower(value: string): string {
  return value.toLowerCase();
}

/** Names of chain events that carry the wallet's new available balance (`balanceAfter`). */
export const BALANCE_EVENTS = new Set([
  "Deposited",
  "Withdrawn",
  "JobOpened",
  "JobSettled",
  "JobFailed",
  "JobRefunded",
  "JobDisputeClosed",
  // Owed restitution paid when the reserve was topped up (CreditEscrow.RestitutionPaid).
  "RestitutionPaid",
]);

/** The webhook events one chain event announces (credit.low aside: it depends on state, see trackCreditLow.ts). */
export async function deriveEvents(row: ChainEventRow, index: IndexReader): Promise<NewEvent[]> {
  const data = (row.data ?? {}) as Data;
  const createdAt = new Date(Number(row.timestamp) * 1000);
  const blockNumber = Number(row.blockNumber);
  const make = (event: EventName, wallet: string | null, payload: Data): NewEvent => ({
    id: eventIdFor(row.id, event),
    event,
    wallet: wallet === null ? null : lower(wallet),
    createdAt,
    source: row.id,
    data: payload,
  });
  const wallet = row.wallet;

  switch (row.name) {
    case "JobOpened": {
      const creditsLocked = integer(data, "creditsLocked");
      return [
        make("job.submitted", wallet, {
          job_id: text(data, "jobId"),
          model: text(data, "modelId"),
          tier: text(data, "tier"),
          credits_locked: creditsLocked,
          usdg_value: usdgValue(creditsLocked),
          escrow_tx: row.txHash,
          block_number: blockNumber,
          credits_remaining: integer(data, "balanceAfter"),
        }),
      ];
    }
    case "JobSettled": {
      const charged = integer(data, "creditsCharged");
      return [
        make("job.completed", wallet, {
          job_id: text(data, "jobId"),
          model: text(data, "modelId"),
          tier: text(data, "tier"),
          credits_charged: charged,
          usdg_value: usdgValue(charged),
          worker_address: lower(text(data, "worker")),
          settlement_tx: row.txHash,
          block_number: blockNumber,
          prompt_tokens: integer(data, "promptTokens"),
          completion_tokens: integer(data, "completionTokens"),
          credits_remaining: integer(data, "balanceAfter"),
        }),
      ];
    }
    case "JobFailed": {
      const returned = integer(data, "creditsReturned");
      return [
        make("job.failed", wallet, {
          job_id: text(data, "jobId"),
          model: text(data, "modelId"),
          tier: text(data, "tier"),
          credits_returned: returned,
          usdg_value: usdgValue(returned),
          fail_tx: row.txHash,
          block_number: blockNumber,
          credits_remaining: integer(data, "balanceAfter"),
        }),
      ];
    }
    case "JobRefunded": {
      const refunded = integer(data, "creditsRefunded");
      return [
        make("job.timeout", wallet, {
          job_id: text(data, "jobId"),
          model: text(data, "modelId"),
          tier: text(data, "tier"),
          credits_refunded: refunded,
          usdg_value: usdgValue(refunded),
          refund_tx: row.txHash,
          block_number: blockNumber,
          credits_remaining: integer(data, "balanceAfter"),
        }),
      ];
    }
    // The escrow's JobDisputed and the dispute contract's DisputeOpened are the same fact (one transaction);
    // DisputeOpened carries the hashes and the arbitration deadline, so it is the one announced.
    case "DisputeOpened":
      return [
        make("job.disputed", wallet, {
          job_id: text(data, "jobId"),
          worker_address: lower(text(data, "worker")),
          your_hash: proofHash(text(data, "clientHash")),
          worker_hash: proofHash(text(data, "proofHash")),
          dispute_tx: row.txHash,
          arbitration_deadline: new Date(integer(data, "deadline") * 1000).toISOString(),
          block_number: blockNumber,
        }),
      ];
    case "Deposited": {
      const credits = integer(data, "credits");
      return [
        make("credit.topup", wallet, {
          credits_added: credits,
          usdg_value: usdgValue(credits),
          credits_remaining: integer(data, "balanceAfter"),
          payer: lower(text(data, "payer")),
          topup_tx: row.txHash,
          block_number: blockNumber,
        }),
      ];
    }
    case "WorkerRegistered": {
      const keys = Array.isArray(data["modelKeys"]) ? (data["modelKeys"] as unknown[]).map(String) : [];
      const ids = await index.modelIds(keys);
      return [
        make("worker.registered", null, {
          worker_address: lower(text(data, "worker")),
          endpoint: text(data, "endpoint"),
          stake_svc: Number(text(data, "stakeSvc")),
          models: keys.map((key) => ids.get(key.toLowerCase()) ?? key),
          registration_tx: row.txHash,
          block_number: blockNumber,
        }),
      ];
    }
    case "WorkerSlashed":
      return [
        make("worker.slashed", null, {
          worker_address: lower(text(data, "worker")),
          slash_amount_svc: Number(text(data, "slashAmountSvc")),
          slash_tx: row.txHash,
          reason: text(data, "reason"),
          related_job_id: text(data, "relatedJobId"),
        }),
      ];
    default:
      return [];
  }
}
