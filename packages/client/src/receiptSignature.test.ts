import { describe, expect, it } from "vitest";
import { hashTypedData, keccak256, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  receiptDigest,
  receiptDomain,
  receiptTypes,
  recoverReceiptSigner,
  signReceipt,
  type Receipt,
} from "./index.js";
import { keccakBackend, receiptDigest as nodeReceiptDigest, secp256k1Backend, signReceiptWithKey } from "./node.js";

const KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const viemAccount = privateKeyToAccount(KEY);
const domain = { chainId: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;
const otherDomain = { chainId: 8453, escrow: "0x000000000000000000000000000000000000dEaD" } as const;

/** Receipts from everyday values to the edges of their Solidity types. */
const receipts: Receipt[] = [
  {
    jobId: keccak256(toHex("job")),
    outputHash: keccak256(toHex("output")),
    promptTokens: 9,
    completionTokens: 2,
    finalTokenAt: 1_700_000_000n,
  },
  {
    jobId: `0x${"00".repeat(32)}`,
    outputHash: `0x${"00".repeat(32)}`,
    promptTokens: 0,
    completionTokens: 0,
    finalTokenAt: 0n,
  },
  {
    jobId: `0x${"ff".repeat(32)}`,
    outputHash: `0x${"AB".repeat(32)}`,
    promptTokens: 2 ** 32 - 1,
    completionTokens: 2 ** 32 - 1,
    finalTokenAt: 2n ** 64n - 1n,
  },
];

function viemDigest(params: typeof domain | typeof otherDomain, receipt: Receipt): Hex {
  return hashTypedData({
    domain: receiptDomain(params),
    types: receiptTypes,
    primaryType: "Receipt",
    message: receipt,
  });
}

describe("receipt signatures", () => {
  it("the receipt digest is viem's EIP-712 hashTypedData of the receipt, for every domain", () => {
    for (const receipt of receipts) {
      expect(receiptDigest(domain, receipt)).toBe(viemDigest(domain, receipt));
      expect(receiptDigest(otherDomain, receipt)).toBe(viemDigest(otherDomain, receipt));
    }
  });

  it("the Node entry's receipt digest, hashed on the native keccak, is the same as viem's", () => {
    expect(keccakBackend).toBe("native");
    for (const receipt of receipts) {
      expect(nodeReceiptDigest(domain, receipt)).toBe(viemDigest(domain, receipt));
      expect(nodeReceiptDigest(otherDomain, receipt)).toBe(viemDigest(otherDomain, receipt));
    }
  });

  it("the native signature of a receipt equals viem's signTypedData for the same key and receipt", async () => {
    expect(secp256k1Backend).toBe("native");
    for (const receipt of receipts) {
      const native = signReceiptWithKey(KEY, domain, receipt);
      expect(native).toBe(await signReceipt(viemAccount, domain, receipt));
      expect(await recoverReceiptSigner(domain, receipt, native)).toBe(viemAccount.address);
    }
  });

  it("error: a receipt field outside its Solidity type has no digest", () => {
    const [receipt] = receipts as [Receipt];
    expect(() => receiptDigest(domain, { ...receipt, promptTokens: 2 ** 32 })).toThrow(/uint32/);
    expect(() => receiptDigest(domain, { ...receipt, completionTokens: -1 })).toThrow(/uint32/);
    expect(() => receiptDigest(domain, { ...receipt, promptTokens: 1.5 })).toThrow(/integer/);
    expect(() => receiptDigest(domain, { ...receipt, finalTokenAt: 2n ** 64n })).toThrow(/uint64/);
    expect(() => receiptDigest(domain, { ...receipt, jobId: "0x1234" })).toThrow(/bytes32/);
  });
});
