import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { newJobId } from "@credit-metered/client";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { failJob, openUnroutedJob, settledJob, timeoutRefund, upheldDispute, type SettledJob } from "./support/jobs.js";
import { startOwnWorker } from "./support/ownWorker.js";
import { runVerify } from "./support/runVerify.js";
import { WEB_TEST_PORT_BASE } from "./globalSetup.js";

// `npm run verify` against the real local chain: jobs that settled, were disputed (and upheld), failed and timed
// out, a tampered text, and a whole wallet's history. The command sees only the RPC URL and deployments file.

const textDir = mkdtempSync(path.join(tmpdir(), "verify-text-"));

function textFile(name: string, text: string): string {
  const file = path.join(textDir, name);
  writeFileSync(file, text, "utf8");
  return file;
}

let client: ClientWallet;
/** The disputed job's model: served by this file's own worker, which the upheld dispute slashes. */
let disputeModel: string;

beforeAll(async () => {
  client = await createClientWallet({ usdg: 5n });
  ({ model: disputeModel } = await startOwnWorker("verify-dispute", WEB_TEST_PORT_BASE + 32, client.apiKey));
});

describe("npm run verify", () => {
  let settled: SettledJob;

  beforeAll(async () => {
    settled = await settledJob(client);
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
    expect(run.stdout).toMatch(/✓ stablecoin to the worker 0\.\d+ USDG matches the event/);
    // Spec, settlement rule 6: the treasury transfer is part of the settlement transaction.
    expect(run.stdout).toMatch(
      /✓ stablecoin to the treasury 0\.\d+ USDG matches the fees of the transaction's settlements/,
    );
    expect(run.stdout).toMatch(/✓ fee = \d+ bps of the charge, the rate at the lock/);
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
    const disputed = await settledJob(client, disputeModel);
    await upheldDispute(client, disputed.jobId);
    const run = await runVerify([disputed.jobId]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`client hash    sha256:${"1".repeat(64)}`);
    expect(run.stdout).toContain("outcome        upheld");
    expect(run.stdout).toMatch(/✓ upheld: the charge \(\d+\) was restored/);
    expect(run.stdout).toContain("CONSISTENT (dispute upheld)");
  });

  it("confirms a failed job: the whole lock came back", async () => {
    const { jobId, jobKey, opener } = await openUnroutedJob(client);
    await failJob(opener, jobKey);
    const run = await runVerify([jobId]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("Failure");
    expect(run.stdout).toContain("✓ the whole lock came back");
    expect(run.stdout).toContain("CONSISTENT (failed)");
  });

  it("confirms a timed-out job refunded after its deadline", async () => {
    const { jobId, jobKey } = await openUnroutedJob(client);
    // Runs after the dispute test: it moves chain time past the job timeout.
    await timeoutRefund(jobKey);
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

  it("reports its progress on stderr page by page over a long history, with the same result", async () => {
    const run = await runVerify(["--wallet", client.wallet, "--blocks-per-query", "25"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const lines = run.stderr.split("\n").filter((line) => line.startsWith("verify: blocks "));
    // The first and the last page are always reported; the stack's chain has far more than two pages of 25 blocks.
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[0]).toMatch(/^verify: blocks [\d,]+–[\d,]+ of [\d,]+ \(\d+%\), [\d,]+ escrow events, [\d.]+ s$/);
    expect(lines.at(-1)).toMatch(/\(100%\)/);
    expect(run.stdout).toMatch(/jobs\s+4 opened: 2 settled, 1 failed, 1 refunded/);
    expect(run.stdout).toContain("CONSISTENT");
  });

  it("error: exits 2 for a block count that is not a positive integer", async () => {
    const run = await runVerify(["--wallet", client.wallet, "--blocks-per-query", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("not a block count");
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
