// Crash recovery: jobs a gateway left open (escrow locked, row in gateway_job, no answer) are settled from a
// stored receipt or refunded after their deadline by the sweeper, with no client request involved; a lock whose row
// was never written is failed back once past the orphan grace.
// The refund case waits out the real 120 s job timeout: shifting the chain clock (evm_increaseTime) would leave
// it ahead of the workers' clocks for good, and the escrow would then refuse every later receipt.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hex } from "viem";
import {
  CHAIN_JOB_STATUSES,
  creditEscrowAbi,
  jobIdToBytes32,
  keyHashOf,
  modelKeyOf,
  newJobId,
  outputHashOf,
  receiptToJson,
  signReceipt,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { waitForJobStatus } from "../support/api.js";
import { chainTime, contracts, mined, publicClient, walletClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";

const MODEL = "qwen3-1.7b";
const gateway = localAccount(LOCAL_ACCOUNT_INDEX.gateway);
const worker = localAccount(LOCAL_ACCOUNT_INDEX.firstWorker);

describe("recovery of jobs a gateway left open", () => {
  let client: ClientWallet;
  let db: pg.Client;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 2n });
    db = new pg.Client(stackInfo().databaseUrl);
    await db.connect();
  });
  afterAll(() => db.end());

  /** A lock the gateway's signer sent for a new job, mined. */
  async function lockOnChain(): Promise<{ jobId: string; jobKey: Hex; hash: Hex }> {
    const jobId = newJobId();
    const jobKey = jobIdToBytes32(jobId);
    const hash = await walletClient(gateway).writeContract({
      chain: null,
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "openJob",
      args: [jobKey, keyHashOf(client.apiKey), modelKeyOf(MODEL), 10],
    });
    await mined(hash);
    return { jobId, jobKey, hash };
  }

  async function chainStatusOf(jobKey: Hex): Promise<string> {
    const [status] = await publicClient().readContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "jobOf",
      args: [jobKey],
    });
    return CHAIN_JOB_STATUSES[status] ?? "none";
  }

  /** What a gateway crash right after openJob (and the worker's ack) leaves behind. */
  async function orphanJob(): Promise<{ jobId: string; jobKey: Hex }> {
    const { jobId, jobKey, hash } = await lockOnChain();
    await db.query(
      `INSERT INTO api.gateway_job (job_id, job_key, wallet, key_hash, model, tier, status, stream, max_tokens, credits_locked, escrow_tx,
       worker, processing_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'lite', 'processing', false, 10, 2, $6, $7, now(), now() - interval '1 minute')`,
      [jobId, jobKey, client.wallet.toLowerCase(), keyHashOf(client.apiKey), MODEL, hash, worker.address.toLowerCase()],
    );
    return { jobId, jobKey };
  }

  it("settles a job whose verified receipt was stored before the crash", async () => {
    const { jobId, jobKey } = await orphanJob();
    const text = "recovered output";
    const receipt = {
      jobId: jobKey,
      outputHash: outputHashOf(text),
      promptTokens: 5,
      completionTokens: 2,
      finalTokenAt: await chainTime(),
    };
    const signature = await signReceipt(
      worker,
      { chainId: stackInfo().chainId, escrow: contracts().creditEscrow },
      receipt,
    );
    await db.query("UPDATE api.gateway_job SET status = 'settling', receipt = $2, signature = $3 WHERE job_id = $1", [
      jobId,
      JSON.stringify(receiptToJson(receipt)),
      signature,
    ]);
    const job = await waitForJobStatus(client.apiKey, jobId, "settled", 45_000);
    expect(job.credits_charged).toBe(2);
    expect(job.on_chain?.proof_hash).toBe(`sha256:${outputHashOf(text).slice(2)}`);
  }, 60_000);

  // The refund case waits out the 120 s; the lock without a row is locked beside it, so its own wait (the orphan
  // grace) runs meanwhile.
  describe("once the chain deadline has passed", () => {
    let withoutReceipt: { jobId: string; jobKey: Hex };
    let rowless: { jobId: string; jobKey: Hex; hash: Hex };
    beforeAll(async () => {
      withoutReceipt = await orphanJob();
      rowless = await lockOnChain();
      expect(await chainStatusOf(rowless.jobKey)).toBe("open");
    });

    it("refunds a job without a receipt", async () => {
      const job = await waitForJobStatus(client.apiKey, withoutReceipt.jobId, "refunded", 170_000);
      expect(job.credits_charged).toBe(0);
    }, 200_000);

    // The row and the lock are written side by side (openEscrow.ts): a crash may leave a lock whose row never
    // committed. Nothing holds it, so the sweep returns it with failJob once it is ORPHAN_LOCK_GRACE_MS old on chain
    // (the gateway's own signer sent it), well before the chain deadline would have refunded it.
    it("returns a lock whose job row was never written once past the orphan grace, before its chain deadline", async () => {
      const { jobId, jobKey, hash } = rowless;
      const until = Date.now() + 170_000;
      let status = await chainStatusOf(jobKey);
      while (status === "open" && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        status = await chainStatusOf(jobKey);
      }
      expect(status).toBe("failed");
      const lock = await mined(hash);
      const [failed] = await publicClient().getContractEvents({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        eventName: "JobFailed",
        args: { jobId: jobKey },
        fromBlock: lock.blockNumber,
      });
      const lockedAt = (await publicClient().getBlock({ blockHash: lock.blockHash })).timestamp;
      const failedAt = (await publicClient().getBlock({ blockHash: failed!.blockHash })).timestamp;
      // The default grace (60 s) and at most two sweeps (10 s each) after it, with a few seconds of slack; the
      // chain deadline is 120 s after the lock.
      expect(Number(failedAt - lockedAt)).toBeLessThanOrEqual(60 + 2 * 10 + 5);
      const rows = await db.query("SELECT 1 FROM api.gateway_job WHERE job_id = $1", [jobId]);
      expect(rows.rowCount).toBe(0);
    }, 200_000);
  });
});
