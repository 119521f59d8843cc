import { type Hex, isHex } from "viem";
import { isValid as isValidUlid, monotonicFactory } from "ulid";

/** The API's job id: `job_` + a 26-character Crockford base32 ULID (time-ordered). */
export type JobId = `job_${string}`;

export const JOB_ID_PREFIX = "job_";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** One upper-case Crockford base32 character (no I, L, O, U), as a regular-expression class. */
const CROCKFORD_CLASS = "[0-9A-HJKMNP-TV-Z]";
const ULID_LENGTH = 26;
const BITS_PER_CHAR = 5n;
/** A ULID is 128 bits; 26 base32 chars carry 130, so the first char is at most 7. */
const ULID_MAX_FIRST_CHAR = "7";
/** A ULID's text as a regular-expression source: 26 Crockford characters, the first at most 7. */
export const ULID_PATTERN_SOURCE = `[0-${ULID_MAX_FIRST_CHAR}]${CROCKFORD_CLASS}{${ULID_LENGTH - 1}}`;
/** `job_` + ULID: the one job-id pattern (the API's validators, the worker protocol, the OpenAPI document). */
export const JOB_ID_PATTERN = new RegExp(`^${JOB_ID_PREFIX}${ULID_PATTERN_SOURCE}$`);
/**
 * `job_` + 26 Crockford characters with any first character: what the web app's `/app/jobs` accepts as a page
 * cursor. Wider than a job id (a cursor only has to compare as text), kept so `/app` answers as before.
 */
export const JOB_CURSOR_PATTERN = new RegExp(`^${JOB_ID_PREFIX}${CROCKFORD_CLASS}{${ULID_LENGTH}}$`);
const BYTES32_PATTERN = /^0x0{32}[0-9a-fA-F]{32}$/;
const BITS_PER_CHAR_NUMBER = Number(BITS_PER_CHAR);
const BITS_PER_HEX_DIGIT = 4;
const HEX_DIGITS = "0123456789abcdef";
/** The escrow's job word keeps the ULID in its low 16 bytes: the high 16 are zero, 32 hex digits. */
const ZERO_HIGH_HALF = "0".repeat(32);

export class JobIdError extends Error {
  override name = "JobIdError";
}

/**
 * Random fractions in [0, 1) from the platform's CSPRNG, drawn a pool at a time. ulid's own source asks
 * `crypto.getRandomValues` for one byte per character, 16 calls per id: 85 µs of the gateway's CPU per job in the
 * bench's profile (issue 26). A byte ÷ 256 picks each of the 32 characters exactly 8 ways (ulid's ÷ 255 does not).
 */
function pooledRandom(): () => number {
  const POOL_BYTES = 4_096;
  const pool = new Uint8Array(POOL_BYTES);
  let next = POOL_BYTES;
  return () => {
    if (next === POOL_BYTES) {
      globalThis.crypto.getRandomValues(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

// Monotonic within a millisecond too, so ids made by one process sort in creation order.
const nextUlid = monotonicFactory(pooledRandom());

/** A fresh, time-ordered job id. */
export function newJobId(now?: number): JobId {
  return `${JOB_ID_PREFIX}${nextUlid(now)}` as JobId;
}

/** Whether `value` is a well-formed `job_<ULID>` (upper-case Crockford base32). */
export function isJobId(value: string): value is JobId {
  return JOB_ID_PATTERN.test(value) && isValidUlid(value.slice(JOB_ID_PREFIX.length));
}

/** Whether `value` is a bytes32 job id as the escrow stores it (high 16 bytes zero). */
export function isJobIdBytes32(value: string): value is Hex {
  return isHex(value) && BYTES32_PATTERN.test(value);
}

/** The escrow's bytes32 for a job id: the ULID's 128 bits in the low 16 bytes. */
export function jobIdToBytes32(jobId: string): Hex {
  if (!isJobId(jobId)) throw new JobIdError(`not a job id: ${jobId}`);
  // Five bits a character into hex digits through a small bit buffer, not a BigInt per character (it runs for every
  // job on the gateway). Two zero bits in front make the ULID's 130 bits 33 whole hex digits; the first is 0, since
  // the first character is at most 7.
  let digits = "";
  let buffer = 0;
  let buffered = 2;
  for (let i = JOB_ID_PREFIX.length; i < jobId.length; i++) {
    buffer = (buffer << BITS_PER_CHAR_NUMBER) | CROCKFORD.indexOf(jobId[i]!);
    buffered += BITS_PER_CHAR_NUMBER;
    while (buffered >= BITS_PER_HEX_DIGIT) {
      buffered -= BITS_PER_HEX_DIGIT;
      digits += HEX_DIGITS[(buffer >> buffered) & 0xf];
      buffer &= (1 << buffered) - 1;
    }
  }
  return `0x${ZERO_HIGH_HALF}${digits.slice(1)}`;
}

/** The API's job id for an escrow bytes32 (inverse of `jobIdToBytes32`). */
export function bytes32ToJobId(value: Hex): JobId {
  if (!isJobIdBytes32(value)) throw new JobIdError(`not a job id bytes32: ${value}`);
  let rest = BigInt(value);
  let text = "";
  for (let i = 0; i < ULID_LENGTH; i++) {
    text = CROCKFORD[Number(rest & 31n)] + text;
    rest >>= BITS_PER_CHAR;
  }
  if (text[0]! > ULID_MAX_FIRST_CHAR) throw new JobIdError(`not a job id bytes32: ${value}`);
  return `${JOB_ID_PREFIX}${text}` as JobId;
}
