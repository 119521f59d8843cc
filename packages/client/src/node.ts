// The Node-only helpers of the client library (the file system, native crypto): never bundled for a browser.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Hex } from "viem";
import { type Deployment, parseDeployment } from "./deployment.js";
import { type Receipt, type ReceiptDomainParams, receiptDigest } from "./receipt.js";
import { type NativeSecp256k1, secp256k1On, signatureToHex } from "./secp256k1.js";

export { type DigestSignature, type NativeSecp256k1, type Secp256k1, secp256k1On } from "./secp256k1.js";

/** Reads and validates a deployments file. */
export function loadDeployment(path: string): Deployment {
  return parseDeployment(JSON.parse(readFileSync(path, "utf8")));
}

/**
 * libsecp256k1 through the `secp256k1` package's prebuilt N-API binding (linux-x64, darwin-arm64, win32-x64 ship in
 * the package; no compiler at install). Loaded from `secp256k1/bindings`, not the package's entry, whose fallback is
 * `elliptic` — slower than viem's own @noble/curves, which is the fallback where no binding loads.
 * Measured in scripts/microbench/secp256k1.ts (docs/DESIGN.md "Crypto on the hot path").
 */
function loadNative(): NativeSecp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

const active = secp256k1On(loadNative());

/** Which implementation signs and recovers in this process (logged at start). */
export const secp256k1Backend = active.backend;
/** Signs a 32-byte digest: RFC 6979 nonce and low s, as viem (noble) signs, so both give the same bytes. */
export const signDigest = active.signDigest;
/**
 * The address whose key signed `digest` with a 65-byte `r ‖ s ‖ v` signature (v 27/28 or 0/1), as the escrow's
 * `ECDSA.recover` finds it. Throws when the signature does not recover.
 */
export const recoverAddress = active.recoverAddress;
/**
 * A viem account for `privateKey` whose transactions are signed by `signDigest` (viem's own `signTransaction` signs
 * with @noble/curves); messages and typed data keep viem's signer.
 */
export const transactionAccount = active.transactionAccount;

/**
 * Signs `receipt` with `privateKey` on this process's secp256k1: the same 65 bytes as `signReceipt` with viem's
 * account for that key (RFC 6979 makes the signature deterministic), at a fraction of its CPU.
 */
export function signReceiptWithKey(privateKey: Hex, domain: ReceiptDomainParams, receipt: Receipt): Hex {
  return signatureToHex(signDigest(receiptDigest(domain, receipt), privateKey));
}
