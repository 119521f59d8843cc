import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Hex } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { jobIdToBytes32, modelKeyOf, newJobId } from "../../contracts/client/index.js";
import { keyHashOf } from "../../contracts/client/keyHash.js";
import { rawRequest, waitForJobStatus } from "../support/api.js";
import {
  adminAccount,
  arbiterAccount,
  contracts,
  creditEscrowAbi,
  disputeManagerAbi,
  freshAccount,
  mined,
  publicClient,
  walletClient,
} from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { runVerify } from "./support/runVerify.js";

// `npm run verify` against the real local chain: jobs that settled, were disputed (and upheld), failed and timed
// out, a tampered text, and a whole wallet's history. The command sees only the RPC URL and deployments file.

const MODEL = "llama-3.2-3b-instruct";
const textDir = mkdtempSync(path.join(tmpdir(), "verify-text-"));

function textFile(name: string, text: string): string {
  const file = path.join(textDir, name);
  writeFileSync(file, text, "utf8");
  return file;
}

let client: ClientWallet;

/** A real chat completion through the gateway, settled on chain; its id, the received text, its settlement tx. */
async function settledJob(): Promise<{ jobId: string; text: string; settlementTx: string; escrowTx: string }> {
  const response = await rawRequest("POST", "/v1/chat/completions", {
    apiKey: client.apiKey,
    body: { model: MODEL, messages: [{ role: "user", content: "Tell me something true." }], max_tokens: 64 },
  });
  expect(response.status, response.body).toBe(200);
  const text = response.json<{ choices: { message: { content: string } }[] }>().choices[0]!.message.content;
  const jobId = String(response.headers["x-service-job-id"]);
  const job = await waitForJobStatus(client.apiKey, jobId, "settled");
  return { jobId, text, settlementTx: job.on_chain!.settlement_tx, escrowTx: job.on_chain!.escrow_tx };
}

/**
 * A second holder of GATEWAY_ROLE (granted by the admin) opens a job for the client's key and never routes it,
 * so the test can end it with failJob or a timeout refund, the paths the gateway takes when things go wrong.
 */
async function openUnroutedJob(): Promise<{
  jobId: string;
  jobKey: Hex;
  opener: Awaited<ReturnType<typeof freshAccount>>["account"];
}> {
  const { account: opener } = await freshAccount();
  const role = await publicClient().readContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "GATEWAY_ROLE",
  });
  await mined(
    await walletClient(adminAccount).writeContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "grantRole",
      args: [role, opener.address],
    }),
  );
  const jobId = newJobId();
  const jobKey = jobIdToBytes32(jobId);
  await mined(
    await walletClient(opener).writeContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "openJob",
      args: [jobKey, keyHashOf(client.apiKey), modelKeyOf(MODEL), 100],
    }),
  );
  return { jobId, jobKey, opener };
}

beforeAll(async () => {
  client = await createClientWallet({ usdg: 5n });
});

describe("npm run verify", () => {
  let settled: Awaited<ReturnType<typeof settledJob>>;

  beforeAll(async () => {
    settled = await settledJob();
  });

  it("confirms a settled job: escrow lock, settlement, amounts, worker, proof, and the received text", async () => {
    const run = await runVerify([settled.jobId, "--text", textFile("received.txt", settled.text)]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`Job ${settled.jobId}`);
    expect(run.stdout).toContain(`Escrow lock      tx ${settled.escrowTx}`);
    expect(run.stdout).toContain(`Settlement       tx ${settled.settlementTx}`);
    expect(run.stdout).toMatch(/worker\s+0x[0-9a-fA-F]{40}/);
    expect(run.stdout).toMatch(/to worker\s+0\.\d+ USDG/);
    expect(run.stdout).toMatch(/to treasury\s+0\.\d+ USDG/);
    expect(run.stdout).toContain("✓ charged + refunded = locked");
    expect(run.stdout).toContain("✓ stablecoin transfer escrow → worker");
    expect(run.stdout).toContain("✓ stablecoin transfer escrow → treasury");
    expect(run.stdout).toContain("✓ the given text hashes to the proof hash");
    expect(run.stdout).toContain("CONSISTENT (settled)");
  });

  it("error: exits non-zero when the received text was tampered with", async () => {
    const run = await runVerify([settled.jobId, "--text", textFile("tampered.txt", `${settled.text} (edited)`)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("✗ the given text hashes to the proof hash");
    expect(run.stdout).toContain("INCONSISTENT");
  });

  it("finds the job from its settlement transaction hash", async () => {
    const run = await runVerify([settled.settlementTx]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`Job ${settled.jobId}`);
  });

  it("confirms a disputed job upheld by the arbiter: the charge came back", async () => {
    const disputed = await settledJob();
    const answer = await rawRequest("POST", `/v1/jobs/${disputed.jobId}/dispute`, {
      apiKey: client.apiKey,
      body: { received_output_hash: `sha256:${"1".repeat(64)}` },
    });
    expect(answer.status, answer.body).toBe(200);
    await mined(
      await walletClient(arbiterAccount).writeContract({
        address: contracts().disputeManager,
        abi: disputeManagerAbi,
        functionName: "resolveDispute",
        args: [jobIdToBytes32(disputed.jobId), true],
      }),
    );
    const run = await runVerify([disputed.jobId]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`client hash    sha256:${"1".repeat(64)}`);
    expect(run.stdout).toContain("outcome        upheld");
    expect(run.stdout).toMatch(/✓ upheld: the charge \(\d+\) was restored/);
    expect(run.stdout).toContain("CONSISTENT (dispute upheld)");
  });

  it("confirms a failed job: the whole lock came back", async () => {
    const { jobId, jobKey, opener } = await openUnroutedJob();
    await mined(
      await walletClient(opener).writeContract({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        functionName: "failJob",
        args: [jobKey],
      }),
    );
    const run = await runVerify([jobId]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("Failure");
    expect(run.stdout).toContain("✓ the whole lock came back");
    expect(run.stdout).toContain("CONSISTENT (failed)");
  });

  it("confirms a timed-out job refunded after its deadline", async () => {
    const { jobId, jobKey } = await openUnroutedJob();
    // Past the chain's job timeout (120 s); anyone may then refund. Runs last: it moves chain time ahead.
    await publicClient().request({ method: "evm_increaseTime" as never, params: [180] as never });
    await publicClient().request({ method: "evm_mine" as never, params: [] as never });
    const { account: anyone } = await freshAccount();
    await walletClient(anyone)
      .writeContract({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        functionName: "refund",
        args: [jobKey],
      })
      .then(mined)
      // The gateway's sweeper may have refunded it first: the chain decides, the check below reads it.
      .catch(() => undefined);
    const run = await runVerify([jobId]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("Timeout refund");
    expect(run.stdout).toContain("✓ the whole lock was refunded");
  });

  it("reconciles the wallet's whole history with the escrow's balance", async () => {
    const run = await runVerify(["--wallet", client.wallet]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("✓ deposits − withdrawals − charges + restored − locked = available");
    expect(run.stdout).toContain("✓ locked from the logs = locked in the escrow");
    expect(run.stdout).toMatch(/jobs\s+4 opened: 2 settled, 1 failed, 1 refunded/);
    expect(run.stdout).toContain("CONSISTENT");
  });

  it("error: exits non-zero for a job the chain has never seen", async () => {
    const run = await runVerify([newJobId()]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("not found on chain");
  });

  it("error: exits 2 for input that is neither a job id nor a transaction hash", async () => {
    const run = await runVerify(["not-a-job"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("not a job id");
  });
});
