import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bytesToHex, keccak256, parseGwei, parseTransaction, recoverTransactionAddress, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { receiptDigest, recoverReceiptSigner, signReceipt, type Receipt } from "@credit-metered/client";
import {
  keccak256Hex,
  keccakBackend,
  recoverAddress,
  secp256k1Backend,
  secp256k1On,
  transactionAccount,
} from "./secp256k1.js";

const KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const viemAccount = privateKeyToAccount(KEY);
const domain = { chainId: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;
const receipt: Receipt = {
  jobId: keccak256(toHex("job")),
  outputHash: keccak256(toHex("output")),
  promptTokens: 9,
  completionTokens: 2,
  finalTokenAt: 1_700_000_000n,
};
const transaction = {
  type: "eip1559",
  chainId: 31337,
  to: "0x000000000000000000000000000000000000dEaD",
  data: "0xabcdef",
  gas: 90_000n,
  nonce: 12,
  maxFeePerGas: parseGwei("2"),
  maxPriorityFeePerGas: parseGwei("0.001"),
} as const;

describe("secp256k1", () => {
  it("runs on libsecp256k1's prebuilt binding on this platform", () => {
    expect(secp256k1Backend).toBe("native");
  });

  it("recovers the worker viem recovers from a receipt signature", async () => {
    const signature = await signReceipt(viemAccount, domain, receipt);
    expect(recoverAddress(receiptDigest(domain, receipt), signature)).toBe(
      await recoverReceiptSigner(domain, receipt, signature),
    );
  });

  it("signs a transaction byte for byte as viem's signer does", async () => {
    const raw = await transactionAccount(KEY).signTransaction(transaction);
    expect(raw).toBe(await viemAccount.signTransaction(transaction));
    expect(await recoverTransactionAddress({ serializedTransaction: raw as never })).toBe(viemAccount.address);
    expect(parseTransaction(raw).nonce).toBe(12);
  });

  it("falls back to @noble/curves with the same results where no binding loads", async () => {
    const js = secp256k1On(undefined);
    expect(js.backend).toBe("js");
    const signature = await signReceipt(viemAccount, domain, receipt);
    expect(js.recoverAddress(receiptDigest(domain, receipt), signature)).toBe(viemAccount.address);
    expect(await js.transactionAccount(KEY).signTransaction(transaction)).toBe(
      await viemAccount.signTransaction(transaction),
    );
  });

  it("error: a signature whose v is not 27, 28, 0 or 1 does not recover", async () => {
    const signature = await signReceipt(viemAccount, domain, receipt);
    expect(() => recoverAddress(receiptDigest(domain, receipt), `${signature.slice(0, 130)}1d` as Hex)).toThrow();
  });

  it("error: a signature of another length does not recover", () => {
    expect(() => recoverAddress(receiptDigest(domain, receipt), `0x${"11".repeat(64)}`)).toThrow();
  });
});

describe("keccak-256 of transactions", () => {
  it("runs on the keccak package's prebuilt binding on this platform", () => {
    expect(keccakBackend).toBe("native");
  });

  it("gives viem's keccak256 for any bytes, empty to batch-sized", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 20_000 }), (bytes) => {
        const hex = bytesToHex(bytes);
        expect(keccak256Hex(hex)).toBe(keccak256(hex));
        expect(keccak256Hex(hex.toUpperCase().replace("0X", "0x") as Hex)).toBe(keccak256(hex));
      }),
      { numRuns: 300 },
    );
  });

  it("input that is not whole hex bytes gets viem's answer, not a hash of the part Buffer would decode", () => {
    for (const odd of ["0xabzz", "0xabc", "0x0", "abcd"] as Hex[]) expect(keccak256Hex(odd)).toBe(keccak256(odd));
  });

  it("signs a batch-sized transaction byte for byte as viem's signer does, with its hash", async () => {
    const batch = { ...transaction, data: bytesToHex(new Uint8Array(8_000).map((_, i) => i % 251)) };
    const raw = await transactionAccount(KEY).signTransaction(batch);
    expect(raw).toBe(await viemAccount.signTransaction(batch));
    expect(keccak256Hex(raw)).toBe(keccak256(raw));
  });
});
