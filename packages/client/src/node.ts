// The Node-only helpers of the client library (the file system, native crypto): never bundled for a browser.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { keccak256, type Hex } from "viem";
import { type Deployment, parseDeployment } from "./deployment.js";
import { type Keccak256Bytes, type Receipt, type ReceiptDomainParams, receiptDigestOn } from "./receipt.js";
import { type Keccak256Hex, type NativeSecp256k1, secp256k1On, signatureToHex } from "./secp256k1.js";

export {
  type DigestSignature,
  type Keccak256Hex,
  type NativeSecp256k1,
  type Secp256k1,
  secp256k1On,
} from "./secp256k1.js";

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

/** The one call of the `keccak` package's binding this module uses (a Keccak sponge, as a hash object). */
type NativeKeccakFactory = (algorithm: "keccak256") => { update(data: Buffer): { digest(): Buffer } };

/**
 * keccak-256 through the `keccak` package's prebuilt N-API binding (linux-x64, darwin-x64, win32-x64 ship in the
 * package; loaded from `keccak/bindings`, whose entry would fall back to a JS sponge), else viem's. The gateway
 * hashes each batch transaction twice (to sign it, and for its hash), kilobytes of calldata each time: viem's
 * keccak was 6% of the gateway's CPU at 200 clients. CPU per call, viem against native (Hex in, Hex out): 36 →
 * 6 µs for 512 bytes, 507 → 38 µs for 8 kB (docs/DESIGN.md "Crypto on the hot path").
 */
function loadNativeKeccakFactory(): NativeKeccakFactory | undefined {
  try {
    return createRequire(import.meta.url)("keccak/bindings") as NativeKeccakFactory;
  } catch {
    return undefined;
  }
}
const nativeKeccakFactory = loadNativeKeccakFactory();

function loadNativeKeccak(): Keccak256Hex | undefined {
  const create = nativeKeccakFactory;
  if (!create) return undefined;
  return (data) => {
    const bytes = Buffer.from(data.slice(2), "hex");
    // Buffer.from stops at the first pair that is not hex: such input gets viem's answer, not a hash of a prefix.
    if (bytes.length * 2 !== data.length - 2 || !data.startsWith("0x")) return keccak256(data);
    return `0x${create("keccak256").update(bytes).digest().toString("hex")}`;
  };
}

const nativeKeccak = loadNativeKeccak();
/** Which keccak-256 hashes this process's transactions (logged at start with the secp256k1 backend). */
export const keccakBackend: "native" | "js" = nativeKeccak ? "native" : "js";
/** keccak-256 of hex-encoded bytes, the same as viem's `keccak256(hex)`, on the native binding where it loads. */
export const keccak256Hex: Keccak256Hex = nativeKeccak ?? ((data) => keccak256(data));

/**
 * keccak-256 of bytes on the native binding where it loads (viem's otherwise): a receipt's digest is two hashes of
 * 192 and 66 bytes, on every receipt the worker signs and the gateway checks; viem's were 2–5% of either's CPU.
 */
function keccak256BytesOn(create: NativeKeccakFactory | undefined): Keccak256Bytes {
  if (!create) return (data) => keccak256(data, "bytes");
  return (data) =>
    create("keccak256")
      .update(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
      .digest();
}
const keccak256Bytes = keccak256BytesOn(nativeKeccakFactory);

/**
 * The EIP-712 digest of a receipt (`receiptDigest` of the package's entry, the same bytes), hashed on this process's
 * keccak-256.
 */
export function receiptDigest(domain: ReceiptDomainParams, receipt: Receipt): Hex {
  return receiptDigestOn(keccak256Bytes, domain, receipt);
}

const active = secp256k1On(loadNative(), keccak256Hex);

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
