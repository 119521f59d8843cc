// The gateway's secp256k1 (transaction signing, receipt recovery) and keccak (transaction hashes) is the client package's Node entry's: one
// implementation for the gateway and the worker (packages/client/src/secp256k1.ts, loaded in node.ts).
export {
  type DigestSignature,
  type Keccak256Hex,
  type NativeSecp256k1,
  type Secp256k1,
  recoverAddress,
  secp256k1Backend,
  secp256k1On,
  signDigest,
  transactionAccount,
  keccak256Hex,
  keccakBackend,
} from "@credit-metered/client/node";
