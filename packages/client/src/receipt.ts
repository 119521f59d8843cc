import {
  type Address,
  type Hex,
  type LocalAccount,
  hashTypedData,
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

/** The EIP-712 digest (equals `CreditEscrow.receiptDigest`). */
export function receiptDigest(domain: ReceiptDomainParams, receipt: Receipt): Hex {
  return hashTypedData({
    domain: receiptDomain(domain),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receipt,
  });
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
