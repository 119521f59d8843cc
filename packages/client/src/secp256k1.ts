import { secp256k1 as noble } from "@noble/curves/secp256k1";
import {
  bytesToHex,
  getAddress,
  hexToBytes,
  keccak256,
  serializeTransaction,
  type Address,
  type Hex,
  type LocalAccount,
  type TransactionSerializable,
} from "viem";
import { privateKeyToAccount, toAccount } from "viem/accounts";

/**
 * The secp256k1 operations of the product's hot paths (the gateway's transactions and receipt checks, the worker's
 * receipts) on one implementation. This file takes the native binding as an argument and stays browser-safe; the
 * ./node entry (node.ts) loads libsecp256k1 and exports the process's instance.
 */

/** The two calls of the `secp256k1` package's native binding (libsecp256k1) this module uses. */
export interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
}

/**
 * keccak-256 of hex-encoded bytes, as viem's `keccak256(hex)`. node.ts passes the `keccak` package's native one; the
 * default is viem's (browser-safe).
 */
export type Keccak256Hex = (data: Hex) => Hex;

export interface DigestSignature {
  r: Hex;
  s: Hex;
  yParity: 0 | 1;
}

/** The operations, on one implementation. */
export interface Secp256k1 {
  backend: "native" | "js";
  /** Signs a 32-byte digest: RFC 6979 nonce and low s, as viem (noble) signs, so both give the same bytes. */
  signDigest(digest: Hex, privateKey: Hex): DigestSignature;
  /**
   * The address whose key signed `digest` with a 65-byte `r ‖ s ‖ v` signature (v 27/28 or 0/1), as the escrow's
   * `ECDSA.recover` finds it. Throws when the signature does not recover.
   */
  recoverAddress(digest: Hex, signature: Hex): Address;
  /**
   * A viem account for `privateKey` whose transactions are signed by `signDigest` (viem's own `signTransaction` signs
   * with @noble/curves); messages and typed data keep viem's signer.
   */
  transactionAccount(privateKey: Hex): LocalAccount;
}

/**
 * The implementation on `native`, or on @noble/curves without it (tests compare the two). `hash` hashes the
 * serialized transactions `transactionAccount` signs (kilobytes of calldata for a batch).
 */
export function secp256k1On(native: NativeSecp256k1 | undefined, hash: Keccak256Hex = keccak256): Secp256k1 {
  return {
    backend: native ? "native" : "js",
    signDigest: (digest, privateKey) => signDigestOn(native, digest, privateKey),
    recoverAddress: (digest, signature) => recoverAddressOn(native, digest, signature),
    transactionAccount: (privateKey) => transactionAccountOn(native, hash, privateKey),
  };
}

/** The 65-byte `r ‖ s ‖ v` (v 27/28) spelling of a signature, as viem's `signTypedData` and `signMessage` return it. */
export function signatureToHex({ r, s, yParity }: DigestSignature): Hex {
  return `${r}${s.slice(2)}${yParity === 1 ? "1c" : "1b"}`;
}

function signDigestOn(native: NativeSecp256k1 | undefined, digest: Hex, privateKey: Hex): DigestSignature {
  if (native) {
    const { signature, recid } = native.ecdsaSign(hexToBytes(digest), hexToBytes(privateKey));
    return {
      r: bytesToHex(signature.subarray(0, 32)),
      s: bytesToHex(signature.subarray(32, 64)),
      yParity: recid === 1 ? 1 : 0,
    };
  }
  const signature = noble.sign(digest.slice(2), privateKey.slice(2), { lowS: true });
  return {
    r: `0x${signature.r.toString(16).padStart(64, "0")}`,
    s: `0x${signature.s.toString(16).padStart(64, "0")}`,
    yParity: signature.recovery === 1 ? 1 : 0,
  };
}

function recoverAddressOn(native: NativeSecp256k1 | undefined, digest: Hex, signature: Hex): Address {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) throw new Error(`a signature is 65 bytes, not ${bytes.length}`);
  const v = bytes[64]!;
  const recid = v === 27 || v === 28 ? v - 27 : v;
  if (recid !== 0 && recid !== 1) throw new Error(`invalid signature v ${v}`);
  let publicKey: Uint8Array;
  if (native) {
    publicKey = native.ecdsaRecover(bytes.subarray(0, 64), recid, hexToBytes(digest), false);
  } else {
    publicKey = noble.Signature.fromCompact(bytes.subarray(0, 64))
      .addRecoveryBit(recid)
      .recoverPublicKey(digest.slice(2))
      .toRawBytes(false);
  }
  return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(26)}`);
}

function transactionAccountOn(native: NativeSecp256k1 | undefined, hash: Keccak256Hex, privateKey: Hex): LocalAccount {
  const base = privateKeyToAccount(privateKey);
  const account = toAccount({
    address: base.address,
    sign: base.sign,
    signAuthorization: base.signAuthorization,
    signMessage: base.signMessage,
    signTypedData: base.signTypedData,
    async signTransaction(transaction, options) {
      const serializer = (options?.serializer ?? serializeTransaction) as (
        transaction: TransactionSerializable,
        signature?: DigestSignature,
      ) => Hex;
      // EIP-4844 sidecars are not part of the signed payload (as in viem's signTransaction).
      const signable = transaction.type === "eip4844" ? { ...transaction, sidecars: false as const } : transaction;
      const signature = signDigestOn(native, hash(serializer(signable)), privateKey);
      return serializer(transaction, signature);
    },
  });
  return { ...account, publicKey: base.publicKey, source: "privateKey" } as LocalAccount;
}
