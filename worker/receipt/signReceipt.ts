import type { Hex, LocalAccount } from "viem";
import { receiptDomain, receiptMessage, receiptTypes } from "./receiptTypes.js";
import type { EscrowDomain, Receipt } from "./receiptTypes.js";

/** Signs a receipt (EIP-712) for the given escrow; the escrow recovers the worker address from it. */
export async function signReceipt(account: LocalAccount, escrow: EscrowDomain, receipt: Receipt): Promise<Hex> {
  return account.signTypedData({
    domain: receiptDomain(escrow),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receiptMessage(receipt),
  });
}
