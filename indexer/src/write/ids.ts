import type { Hex } from "viem";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The API's `job_<ULID>` for an on-chain bytes32 job id (low 16 bytes = the ULID's 128 bits, docs/DESIGN.md).
 * Kept here rather than imported so the indexer's build (and so its resume-after-restart identity) only
 * depends on files under `indexer/src`.
 */
export function jobIdFromKey(jobKey: Hex): string {
  let value = BigInt(jobKey) & ((1n << 128n) - 1n);
  let text = "";
  for (let i = 0; i < 26; i++) {
    text = CROCKFORD[Number(value & 31n)] + text;
    value >>= 5n;
  }
  return `job_${text}`;
}

/** Stable id of a log: `<chainId>:<blockNumber>:<logIndex>` (the same after a restart or a replay). */
export function chainEventId(chainId: number, blockNumber: bigint, logIndex: number): string {
  return `${chainId}:${blockNumber}:${logIndex}`;
}

/** Zero-padded `<blockNumber 12 digits><logIndex 6 digits>`: sorts as text in chain order. */
export function chainEventCursor(blockNumber: bigint, logIndex: number): string {
  return `${blockNumber.toString().padStart(12, "0")}${logIndex.toString().padStart(6, "0")}`;
}
