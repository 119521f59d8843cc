/**
 * Micro-benchmark: secp256k1 on the gateway's hot path (issue 26, "Crypto off the slow path"). Compares, per
 * operation, viem's pure-JS path (@noble/curves) with libsecp256k1 through the `secp256k1` package's prebuilt
 * binding (api/chain/secp256k1.ts), and pure-JS recovery batched in a worker thread (off the event loop).
 * Prints ops/s and CPU µs per operation (the whole process, and the main thread alone for the worker variant).
 *
 *   npx tsx scripts/microbench/secp256k1.ts [--ms 1500]
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { secp256k1 as noble } from "@noble/curves/secp256k1";
import { keccak256, parseGwei, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { receiptDigest, recoverReceiptSigner, signReceipt, type Receipt } from "@credit-metered/client";
import { recoverAddress, secp256k1Backend, signDigest, transactionAccount } from "../../api/chain/secp256k1.js";

const argMs = process.argv.indexOf("--ms");
const RUN_MS = argMs > 0 ? Number(process.argv[argMs + 1]) : 1_500;
const KEY: Hex = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const worker = privateKeyToAccount(KEY);
const domain = { chainId: 31337, escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;

interface Row {
  operation: string;
  implementation: string;
  opsPerSecond: number;
  cpuUsPerOp: number;
  mainThreadCpuUsPerOp?: number;
}

async function measure(
  operation: string,
  implementation: string,
  run: (i: number) => unknown,
  perCall = 1,
): Promise<Row> {
  for (let i = 0; i < 200; i++) await run(i); // warm-up (JIT, precomputed tables)
  const cpu = process.cpuUsage();
  const thread = process.threadCpuUsage();
  const started = performance.now();
  let calls = 0;
  while (performance.now() - started < RUN_MS) {
    await run(calls);
    calls++;
  }
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const usedThread = process.threadCpuUsage(thread);
  const ops = calls * perCall;
  return {
    operation,
    implementation,
    opsPerSecond: Math.round((ops * 1000) / elapsed),
    cpuUsPerOp: Number(((used.user + used.system) / ops).toFixed(1)),
    mainThreadCpuUsPerOp: Number(((usedThread.user + usedThread.system) / ops).toFixed(1)),
  };
}

/** Pure-JS recovery in a worker thread, `batch` digests per message: the event loop only posts and receives. */
function recoveryWorker(): { recover(batch: { digest: Hex; signature: Hex }[]): Promise<string[]>; stop(): void } {
  const thread = new Worker(
    `const { parentPort } = require("node:worker_threads");
     const { secp256k1 } = require(${JSON.stringify(createRequire(import.meta.url).resolve("@noble/curves/secp256k1"))});
     parentPort.on("message", ({ id, batch }) => {
       const out = batch.map(({ digest, signature }) => {
         const bytes = Buffer.from(signature.slice(2), "hex");
         return Buffer.from(secp256k1.Signature.fromCompact(bytes.subarray(0, 64)).addRecoveryBit(bytes[64] - 27)
           .recoverPublicKey(digest.slice(2)).toRawBytes(false)).toString("hex");
       });
       parentPort.postMessage({ id, out });
     });`,
    { eval: true },
  );
  const waiting = new Map<number, (out: string[]) => void>();
  thread.on("message", ({ id, out }: { id: number; out: string[] }) => waiting.get(id)?.(out));
  let next = 0;
  return {
    recover(batch) {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        thread.postMessage({ id, batch });
      });
    },
    stop: () => void thread.terminate(),
  };
}

const receipts: { receipt: Receipt; signature: Hex; digest: Hex }[] = [];
for (let i = 0; i < 256; i++) {
  const receipt: Receipt = {
    jobId: keccak256(toHex(`job-${i}`)),
    outputHash: keccak256(toHex(`output-${i}`)),
    promptTokens: 12 + i,
    completionTokens: 40,
    finalTokenAt: 1_700_000_000n + BigInt(i),
  };
  receipts.push({
    receipt,
    signature: await signReceipt(worker, domain, receipt),
    digest: receiptDigest(domain, receipt),
  });
}
const pick = (i: number) => receipts[i % receipts.length]!;
const compact = receipts.map(({ digest, signature }) => ({
  digest,
  signature: noble.Signature.fromCompact(signature.slice(2, 130)),
  recid: Number.parseInt(signature.slice(130), 16) - 27,
}));
const transaction = (nonce: number) =>
  ({
    type: "eip1559",
    chainId: 31337,
    to: "0x000000000000000000000000000000000000dEaD",
    data: `0x${"ab".repeat(900)}`, // about the size of a settleBatch of 4 receipts
    gas: 500_000n,
    nonce,
    maxFeePerGas: parseGwei("2"),
    maxPriorityFeePerGas: parseGwei("0.001"),
  }) as const;
const viemSigner = privateKeyToAccount(KEY);
const nativeSigner = transactionAccount(KEY);
if ((await viemSigner.signTransaction(transaction(7))) !== (await nativeSigner.signTransaction(transaction(7))))
  throw new Error("the two signers disagree");

const rows: Row[] = [];
rows.push(
  await measure("ecdsa recover (digest → public key)", "@noble/curves (pure JS)", (i) => {
    const { digest, signature, recid } = compact[i % compact.length]!;
    return signature.addRecoveryBit(recid).recoverPublicKey(digest.slice(2));
  }),
  await measure("ecdsa recover (digest → address)", `api/chain/secp256k1.ts (${secp256k1Backend})`, (i) =>
    recoverAddress(pick(i).digest, pick(i).signature),
  ),
  await measure("ecdsa sign (digest)", "@noble/curves (pure JS)", (i) =>
    noble.sign(pick(i).digest.slice(2), KEY.slice(2), { lowS: true }),
  ),
  await measure("ecdsa sign (digest)", `api/chain/secp256k1.ts (${secp256k1Backend})`, (i) =>
    signDigest(pick(i).digest, KEY),
  ),
  await measure("receipt signer (EIP-712 hash + recover)", "viem recoverReceiptSigner (pure JS)", (i) =>
    recoverReceiptSigner(domain, pick(i).receipt, pick(i).signature),
  ),
  await measure(
    "receipt signer (EIP-712 hash + recover)",
    `receiptDigest + recoverAddress (${secp256k1Backend})`,
    (i) => recoverAddress(receiptDigest(domain, pick(i).receipt), pick(i).signature),
  ),
  await measure("sign EIP-1559 transaction (~1 kB calldata)", "viem privateKeyToAccount (pure JS)", (i) =>
    viemSigner.signTransaction(transaction(i)),
  ),
  await measure("sign EIP-1559 transaction (~1 kB calldata)", `transactionAccount (${secp256k1Backend})`, (i) =>
    nativeSigner.signTransaction(transaction(i)),
  ),
);
const threaded = recoveryWorker();
const BATCH = 64;
rows.push(
  await measure(
    "ecdsa recover (digest → public key)",
    `@noble/curves in a worker thread, batches of ${BATCH}`,
    (i) => threaded.recover(Array.from({ length: BATCH }, (_, k) => pick(i * BATCH + k))),
    BATCH,
  ),
);
threaded.stop();

console.log(`node ${process.version}, ${RUN_MS} ms per row, secp256k1 backend: ${secp256k1Backend}`);
console.table(rows);
console.log(JSON.stringify(rows));
