/**
 * The status vocabularies every component shares: of API keys (the registry's enum), of jobs (the API's `status`)
 * and of disputes (the dispute manager's enum). Enum-backed lists are in the Solidity enum's order, so an enum value
 * indexes its name.
 */

/** The statuses of a key that exists (what the index's `api_key` rows hold). */
export const ISSUED_KEY_STATUSES = ["active", "revoked", "suspended"] as const;
export type IssuedKeyStatus = (typeof ISSUED_KEY_STATUSES)[number];

/** `IApiKeyRegistry.KeyStatus` in enum order: `none` is a wallet without a key. */
export const KEY_STATUSES = ["none", ...ISSUED_KEY_STATUSES] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/** `JobStatus` of the escrow (contracts/types/JobStatus.sol) in enum order. */
export const CHAIN_JOB_STATUSES = [
  "none",
  "open",
  "settled",
  "failed",
  "refunded",
  "disputed",
  "dispute_upheld",
] as const;
export type ChainJobStatus = (typeof CHAIN_JOB_STATUSES)[number];

/** The `status` of a Job resource (spec, Jobs), which the gateway also keeps for its own job rows. */
export const JOB_STATES = ["pending", "processing", "settling", "settled", "failed", "refunded", "disputed"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** `IDisputeManager.Outcome` in enum order. */
export const DISPUTE_OUTCOMES = ["none", "pending", "upheld", "rejected", "expired"] as const;
export type DisputeOutcome = (typeof DISPUTE_OUTCOMES)[number];
