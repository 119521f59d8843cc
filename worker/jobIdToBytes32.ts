import type { Hex } from "viem";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** `job_<ULID>` → `bytes32` with the ULID's 128 bits in the low 16 bytes (docs/DESIGN.md "Units and ids"). */
export function jobIdToBytes32(jobId: string): Hex {
  const ulid = jobId.startsWith("job_") ? jobId.slice(4) : jobId;
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(ulid)) throw new Error(`not a job id: ${jobId}`);
  let value = 0n;
  for (const char of ulid) value = (value << 5n) | BigInt(CROCKFORD.indexOf(char));
  return `0x${value.toString(16).padStart(64, "0")}`;
}
