import type { Address, Hex } from "viem";
import { receiptJsonSchema, recoverReceiptSigner, type ReceiptDomainParams } from "@credit-metered/client";

/** Who signed a receipt as it arrived in JSON, for the given escrow (what the escrow contract would recover). */
export function recoverJsonReceiptSigner(
  domain: ReceiptDomainParams,
  receipt: unknown,
  signature: Hex,
): Promise<Address> {
  return recoverReceiptSigner(domain, receiptJsonSchema.parse(receipt), signature);
}
