import { describe, expect, it } from "vitest";
import { keccak256, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { outputHashOf, receiptJsonSchema, recoverReceiptSigner, signReceipt } from "@credit-metered/client";
import { issueReceipt, receiptSignerOf } from "./issueReceipt.js";

const KEY: Hex = "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a";
const escrow = { chainId: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;
const params = {
  jobIdBytes32: keccak256(toHex("job")),
  escrow,
  text: "Hello there.",
  promptTokens: 12,
  completionTokens: 3,
  finalTokenAt: 1_700_000_123,
};

describe("issueReceipt", () => {
  it("signs, on the native signer, the very signature viem's account gives for the same receipt", async () => {
    const { receipt, signature } = issueReceipt(receiptSignerOf(KEY), "none", params);
    const parsed = receiptJsonSchema.parse(receipt);
    expect(signature).toBe(await signReceipt(privateKeyToAccount(KEY), escrow, parsed));
    expect(await recoverReceiptSigner(escrow, parsed, signature)).toBe(privateKeyToAccount(KEY).address);
  });

  it("hashes exactly the emitted text", () => {
    const { receipt } = issueReceipt(receiptSignerOf(KEY), "none", params);
    expect(receipt.outputHash).toBe(outputHashOf("Hello there."));
  });

  it("fault wrong_hash: signs the hash of another text", () => {
    const { receipt } = issueReceipt(receiptSignerOf(KEY), "wrong_hash", params);
    expect(receipt.outputHash).not.toBe(outputHashOf("Hello there."));
  });
});
