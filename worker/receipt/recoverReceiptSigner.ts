import { recoverTypedDataAddress } from "viem";
import type { Address, Hex } from "viem";
import { receiptDomain, receiptMessage, receiptTypes } from "./receiptTypes.js";
import type { EscrowDomain, Receipt } from "./receiptTypes.js";

/** The address that signed a receipt for the given escrow, as the escrow contract would recover it. */
export function recoverReceiptSigner(escrow: EscrowDomain, receipt: Receipt, signature: Hex): Promise<Address> {
  return recoverTypedDataAddress({
    domain: receiptDomain(escrow),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receiptMessage(receipt),
    signature,
  });
}
