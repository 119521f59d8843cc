import { describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { jobIdToBytes32, outputHashOf, signReceipt } from "@credit-metered/client";
import { receiptArg, type Receipt } from "./receiptTypes.js";
import { verifyReceipt } from "./verifyReceipt.js";

const worker = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const stranger = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
const escrow = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as const;
const jobKey = jobIdToBytes32("job_01JD0000000000000000000000");
const text = "Hello there";

const receipt: Receipt = {
  jobId: jobKey,
  outputHash: outputHashOf(text),
  promptTokens: 9,
  completionTokens: 2,
  finalTokenAt: 1_700_000_000,
};
const expectation = {
  jobKey,
  text,
  worker: worker.address,
  chainId: 31337,
  escrow,
  maxCompletionTokens: 16,
  relayedTokens: 2,
  contextWindow: 32_768,
};

async function signedBy(account: typeof worker, value: Receipt) {
  return signReceipt(account, { chainId: 31337, escrow }, receiptArg(value));
}

/** The same signature with `s` → n − s and `v` flipped: it recovers the same signer (viem accepts it). */
function highS(signature: `0x${string}`): `0x${string}` {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const flipped = `${signature.slice(0, 66)}${(n - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}`;
  return flipped as `0x${string}`;
}

describe("verifyReceipt", () => {
  it("accepts the worker's receipt for exactly the relayed text", async () => {
    expect(await verifyReceipt(receipt, await signedBy(worker, receipt), expectation)).toEqual({ ok: true });
  });

  it("error: a hash of other text is rejected", async () => {
    const other = { ...receipt, outputHash: outputHashOf("Hello there!") };
    expect((await verifyReceipt(other, await signedBy(worker, other), expectation)).ok).toBe(false);
  });

  it("error: a receipt signed by another key is rejected", async () => {
    expect((await verifyReceipt(receipt, await signedBy(stranger, receipt), expectation)).ok).toBe(false);
  });

  it("error: a receipt for another job is rejected", async () => {
    const other = { ...receipt, jobId: jobIdToBytes32("job_01JD0000000000000000000001") };
    expect((await verifyReceipt(other, await signedBy(worker, other), expectation)).ok).toBe(false);
  });

  it("error: more completion tokens than were relayed are rejected", async () => {
    const inflated = { ...receipt, completionTokens: 3 };
    expect((await verifyReceipt(inflated, await signedBy(worker, inflated), expectation)).ok).toBe(false);
  });

  it("error: a receipt whose fields were changed after signing is rejected", async () => {
    const signature = await signedBy(worker, receipt);
    expect((await verifyReceipt({ ...receipt, promptTokens: 1 }, signature, expectation)).ok).toBe(false);
  });
  it("error: a high-s form of the worker's own signature is rejected, as the escrow would refuse it", async () => {
    const check = await verifyReceipt(receipt, highS(await signedBy(worker, receipt)), expectation);
    expect(check).toEqual({ ok: false, reason: "signature has a high s, which the escrow refuses" });
  });

  it("error: a signature with v 0 or 1 instead of 27 or 28 is rejected, as the escrow would refuse it", async () => {
    const signature = await signedBy(worker, receipt);
    const yParity =
      `${signature.slice(0, 130)}0${Number.parseInt(signature.slice(130, 132), 16) - 27}` as `0x${string}`;
    expect(await verifyReceipt(receipt, yParity, expectation)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^signature v is [01], the escrow takes 27 or 28$/) as string,
    });
  });

  it("error: a 64-byte compact signature is rejected, as the escrow takes only 65 bytes", async () => {
    const signature = await signedBy(worker, receipt);
    const compact = signature.slice(0, 130) as `0x${string}`;
    expect(await verifyReceipt(receipt, compact, expectation)).toEqual({
      ok: false,
      reason: "signature is not 65 bytes",
    });
  });
});
