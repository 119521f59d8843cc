import type { Hex } from "viem";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The API's `job_<ULID>` from the on-chain bytes32 (low 16 bytes = the ULID's 128 bits, docs/DESIGN.md).
 * Kept here (not imported from the contracts client) so the webhooks module has no build-order dependency.
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
