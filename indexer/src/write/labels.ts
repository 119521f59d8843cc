import { hexToString, type Hex } from "viem";

// Solidity enums arrive as numbers; the API and the tables use the spec's words.
const TIERS = ["lite", "standard", "pro", "max"] as const;
const DISPUTE_OUTCOMES = ["none", "pending", "upheld", "rejected", "expired"] as const;

export function tierLabel(tier: number): string {
  return TIERS[tier] ?? `unknown_${tier}`;
}

export function disputeOutcomeLabel(outcome: number): string {
  return DISPUTE_OUTCOMES[outcome] ?? `unknown_${outcome}`;
}

/** A short ASCII code stored as bytes32 (e.g. the slash reason `fraudulent_proof`). */
export function bytes32Label(value: Hex): string {
  return hexToString(value, { size: 32 }).replace(/\0+$/, "");
}
