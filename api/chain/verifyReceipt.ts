import { isAddressEqual, type Address, type Hex } from "viem";
import { receiptDigest } from "@credit-metered/client/node";
import { outputHashOf } from "./receiptHashes.js";
import { receiptArg, type Receipt } from "./receiptTypes.js";
import { recoverAddress } from "./secp256k1.js";

export interface ReceiptExpectation {
  jobKey: Hex;
  /** The text the gateway relayed to the client (or the delivered prefix after a cancel). */
  text: string;
  worker: Address;
  chainId: number;
  escrow: Address;
  /** Upper bound on completion tokens: the job's effective max_tokens. */
  maxCompletionTokens: number;
  /** Tokens the gateway relayed (one protocol `token` event each); the receipt must not claim more. */
  relayedTokens: number;
  contextWindow: number;
}

export type ReceiptCheck = { ok: true } | { ok: false; reason: string };

/**
 * The gateway's check before settling (ARCHITECTURE "Receipt"): right job, the hash of exactly what was
 * relayed, signed by the worker that served it, token counts within what was asked and relayed.
 */
export async function verifyReceipt(
  receipt: Receipt,
  signature: Hex,
  expected: ReceiptExpectation,
): Promise<ReceiptCheck> {
  if (receipt.jobId.toLowerCase() !== expected.jobKey.toLowerCase())
    return { ok: false, reason: "receipt is for another job" };
  const relayedHash = outputHashOf(expected.text);
  if (receipt.outputHash.toLowerCase() !== relayedHash.toLowerCase()) {
    return { ok: false, reason: `output hash ${receipt.outputHash} differs from the relayed text's ${relayedHash}` };
  }
  if (receipt.completionTokens > expected.maxCompletionTokens) {
    return {
      ok: false,
      reason: `receipt claims ${receipt.completionTokens} tokens, max_tokens was ${expected.maxCompletionTokens}`,
    };
  }
  if (receipt.completionTokens > expected.relayedTokens) {
    return {
      ok: false,
      reason: `receipt claims ${receipt.completionTokens} tokens, ${expected.relayedTokens} were relayed`,
    };
  }
  if (expected.text !== "" && receipt.completionTokens === 0)
    return { ok: false, reason: "receipt claims no tokens for a non-empty output" };
  if (receipt.promptTokens > expected.contextWindow)
    return { ok: false, reason: "receipt prompt tokens exceed the context window" };
  const form = chainSignatureForm(signature);
  if (form !== undefined) return { ok: false, reason: form };
  let signer: Address;
  try {
    signer = recoverAddress(
      receiptDigest({ chainId: expected.chainId, escrow: expected.escrow }, receiptArg(receipt)),
      signature,
    );
  } catch {
    return { ok: false, reason: "signature does not recover" };
  }
  if (!isAddressEqual(signer, expected.worker))
    return { ok: false, reason: `receipt signed by ${signer}, not by ${expected.worker}` };
  return { ok: true };
}

/** Half the secp256k1 group order: the escrow (OpenZeppelin's ECDSA) refuses an `s` above it. */
const SECP256K1_HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * Why the escrow would refuse this signature's form, or undefined: it recovers only 65-byte signatures with a low
 * `s` and `v` of 27 or 28 (ECDSA.tryRecoverCalldata), while viem also recovers compact, `yParity` and high-`s`
 * forms. A receipt the gateway accepted in such a form would be skipped at settlement and its delivered work
 * refunded, so it is refused here like any other bad receipt.
 */
function chainSignatureForm(signature: Hex): string | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return "signature is not 65 bytes";
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  if (s > SECP256K1_HALF_ORDER) return "signature has a high s, which the escrow refuses";
  const v = Number.parseInt(signature.slice(130, 132), 16);
  if (v !== 27 && v !== 28) return `signature v is ${v}, the escrow takes 27 or 28`;
  return undefined;
}
