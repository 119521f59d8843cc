import {
  type Address,
  type Hex,
  type LocalAccount,
  bytesToHex,
  hashDomain,
  hexToBytes,
  keccak256,
  recoverTypedDataAddress,
  sha256,
  stringToBytes,
} from "viem";
import { z } from "zod";

/** What a worker signs when it finishes a job (mirrors `contracts/types/Receipt.sol`). */
export interface Receipt {
  jobId: Hex;
  outputHash: Hex;
  promptTokens: number;
  completionTokens: number;
  finalTokenAt: bigint;
}

/** Where a receipt is valid: the escrow on one chain. */
export interface ReceiptDomainParams {
  chainId: number;
  escrow: Address;
}

export const RECEIPT_DOMAIN_NAME = "CreditEscrow";
export const RECEIPT_DOMAIN_VERSION = "1";
/**
 * How long after its acceptance (`OpenRequest.acceptedAt`) a request's lock may still be taken, seconds: the
 * escrow's `MAX_LOCK_DELAY` (contracts/libraries/ProtocolTime.sol). A job's deadline and its receipt's times run
 * from the acceptance; a lock mined later than this is skipped (`AcceptedAtInvalid`).
 */
export const MAX_LOCK_DELAY_SECONDS = 240;

export const receiptTypes = {
  Receipt: [
    { name: "jobId", type: "bytes32" },
    { name: "outputHash", type: "bytes32" },
    { name: "promptTokens", type: "uint32" },
    { name: "completionTokens", type: "uint32" },
    { name: "finalTokenAt", type: "uint64" },
  ],
} as const;

const bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected 0x + 64 hex digits") as z.ZodType<Hex>;
const uint32 = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32 - 1);

/** A receipt as JSON on the wire (numbers, as in the gateway-worker protocol); parses to `Receipt`. */
export const receiptJsonSchema = z
  .object({
    jobId: bytes32,
    outputHash: bytes32,
    promptTokens: uint32,
    completionTokens: uint32,
    finalTokenAt: z.union([z.number().int().min(0), z.bigint().min(0n), z.string().regex(/^\d+$/)]),
  })
  .transform((r): Receipt => ({ ...r, finalTokenAt: BigInt(r.finalTokenAt) }));

/** A receipt with numbers only, for JSON (`finalTokenAt` is a Unix time, safe as a number). */
export function receiptToJson(receipt: Receipt): Omit<Receipt, "finalTokenAt"> & { finalTokenAt: number } {
  return { ...receipt, finalTokenAt: Number(receipt.finalTokenAt) };
}

export function receiptDomain({ chainId, escrow }: ReceiptDomainParams) {
  return {
    name: RECEIPT_DOMAIN_NAME,
    version: RECEIPT_DOMAIN_VERSION,
    chainId,
    verifyingContract: escrow,
  } as const;
}

/** keccak256 of the receipt's EIP-712 type string (`encodeType` of `receiptTypes`). */
const RECEIPT_TYPEHASH = hexToBytes(
  keccak256(
    stringToBytes(
      "Receipt(bytes32 jobId,bytes32 outputHash,uint32 promptTokens,uint32 completionTokens,uint64 finalTokenAt)",
    ),
  ),
);
/** Domain separators by `chainId:escrow`: a process sees one or two escrows, so hashing each once is enough. */
const domainSeparators = new Map<string, Uint8Array>();
const MAX_CACHED_DOMAINS = 16;

function domainSeparatorOf(domain: ReceiptDomainParams): Uint8Array {
  const key = `${domain.chainId}:${domain.escrow.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (!separator) {
    separator = hexToBytes(
      hashDomain({
        domain: { ...receiptDomain(domain), chainId: BigInt(domain.chainId) },
        types: { EIP712Domain: EIP712_DOMAIN_FIELDS, ...receiptTypes },
      }),
    );
    if (domainSeparators.size >= MAX_CACHED_DOMAINS) domainSeparators.clear();
    domainSeparators.set(key, separator);
  }
  return separator;
}

const EIP712_DOMAIN_FIELDS = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;

function putBytes32(target: Uint8Array, offset: number, value: Hex, field: string): void {
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) throw new Error(`receipt ${field} is not a bytes32: ${value}`);
  target.set(hexToBytes(value), offset);
}

/** Writes `value` as a big-endian uint256 word ending at `offset + 32`, refusing what does not fit `bits`. */
function putUint(target: Uint8Array, offset: number, value: bigint, bits: number, field: string): void {
  if (value < 0n || value >= 1n << BigInt(bits)) throw new Error(`receipt ${field} does not fit uint${bits}: ${value}`);
  let rest = value;
  for (let index = offset + 31; rest > 0n; index--) {
    target[index] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}

/**
 * The EIP-712 digest (equals `CreditEscrow.receiptDigest` and viem's `hashTypedData` over `receiptTypes`, which the
 * tests check): `keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(receipt))`, encoded by hand with the domain
 * separator cached, since viem's generic encoder cost ~0.2 ms per receipt on the worker's and the gateway's hot paths.
 */
export function receiptDigest(domain: ReceiptDomainParams, receipt: Receipt): Hex {
  return receiptDigestOn(viemKeccakBytes, domain, receipt);
}

/** keccak-256 of bytes, as bytes. */
export type Keccak256Bytes = (data: Uint8Array) => Uint8Array;

const viemKeccakBytes: Keccak256Bytes = (data) => keccak256(data, "bytes");

/** `receiptDigest` with its two keccak-256 hashes on `hash` (the Node entry passes the native one). */
export function receiptDigestOn(hash: Keccak256Bytes, domain: ReceiptDomainParams, receipt: Receipt): Hex {
  if (!Number.isInteger(receipt.promptTokens)) throw new Error(`receipt promptTokens is not an integer`);
  if (!Number.isInteger(receipt.completionTokens)) throw new Error(`receipt completionTokens is not an integer`);
  const struct = new Uint8Array(32 * 6);
  struct.set(RECEIPT_TYPEHASH, 0);
  putBytes32(struct, 32, receipt.jobId, "jobId");
  putBytes32(struct, 64, receipt.outputHash, "outputHash");
  putUint(struct, 96, BigInt(receipt.promptTokens), 32, "promptTokens");
  putUint(struct, 128, BigInt(receipt.completionTokens), 32, "completionTokens");
  putUint(struct, 160, receipt.finalTokenAt, 64, "finalTokenAt");
  const message = new Uint8Array(2 + 32 + 32);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(domainSeparatorOf(domain), 2);
  message.set(hash(struct), 34);
  return bytesToHex(hash(message));
}

/** Signs `receipt` as the worker `account`. */
export function signReceipt(account: LocalAccount, domain: ReceiptDomainParams, receipt: Receipt): Promise<Hex> {
  return account.signTypedData({
    domain: receiptDomain(domain),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receipt,
  });
}

/** The address that signed `receipt` (what the escrow's `ECDSA.recover` finds). */
export function recoverReceiptSigner(domain: ReceiptDomainParams, receipt: Receipt, signature: Hex): Promise<Address> {
  return recoverTypedDataAddress({
    domain: receiptDomain(domain),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receipt,
    signature,
  });
}

/** The proof hash of an output: sha256 of its UTF-8 text (no trailing newline added), as bytes32. */
export function outputHashOf(text: string): Hex {
  return sha256(stringToBytes(text));
}

const PROOF_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** The API's spelling of a proof hash: `sha256:<64 lowercase hex>`. */
export function toProofHash(outputHash: Hex): string {
  return `sha256:${outputHash.slice(2).toLowerCase()}`;
}

/** The bytes32 of an API proof hash; throws on anything but `sha256:<64 hex>`. */
export function fromProofHash(proofHash: string): Hex {
  const normalised = proofHash.toLowerCase();
  if (!PROOF_HASH_PATTERN.test(normalised)) throw new Error(`not a sha256 proof hash: ${proofHash}`);
  return `0x${normalised.slice("sha256:".length)}`;
}

export function isProofHash(value: string): boolean {
  return PROOF_HASH_PATTERN.test(value.toLowerCase());
}

/** The settlement facts of a job as `JobSettled` reports them; disputes pass them back to the escrow. */
export interface Settlement {
  wallet: Address;
  worker: Address;
  outputHash: Hex;
  creditsCharged: bigint;
  finalTokenAt: bigint;
}
