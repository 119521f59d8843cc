import type { Account, Hex } from "viem";
import { expect } from "vitest";
import { jobIdToBytes32, modelKeyOf, newJobId, keyHashOf } from "@credit-metered/client";
import { rawRequest, waitForJobStatus } from "../../support/api.js";
import {
  arbiterAccount,
  contracts,
  creditEscrowAbi,
  disputeManagerAbi,
  freshAccount,
  mined,
  publicClient,
  spareGatewaySigner,
  walletClient,
} from "../../support/chain.js";
import type { ClientWallet } from "../../support/wallets.js";

export const JOB_MODEL = "llama-3.2-3b-instruct";

export type SettledJob = { jobId: string; text: string; settlementTx: Hex; escrowTx: Hex };

/** A real chat completion through the gateway, settled on chain; its id, the received text, its transactions. */
export async function settledJob(client: ClientWallet, model = JOB_MODEL): Promise<SettledJob> {
  const response = await rawRequest("POST", "/v1/chat/completions", {
    apiKey: client.apiKey,
    body: { model, messages: [{ role: "user", content: "Tell me something true." }], max_tokens: 64 },
  });
  expect(response.status, response.body).toBe(200);
  const text = response.json<{ choices: { message: { content: string } }[] }>().choices[0]!.message.content;
  const jobId = String(response.headers["x-service-job-id"]);
  const job = await waitForJobStatus(client.apiKey, jobId, "settled");
  return {
    jobId,
    text,
    settlementTx: job.on_chain!.settlement_tx as Hex,
    escrowTx: job.on_chain!.escrow_tx as Hex,
  };
}

/**
 * Disputes a settled job through the API (a differing received hash) and has the arbiter uphold it, which slashes
 * the job's worker: use a job of a worker of the test's own (support/ownWorker.ts).
 */
export async function upheldDispute(client: ClientWallet, jobId: string): Promise<{ disputeTx: Hex; resolveTx: Hex }> {
  const answer = await rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
    apiKey: client.apiKey,
    body: { received_output_hash: `sha256:${"1".repeat(64)}` },
  });
  expect(answer.status, answer.body).toBe(200);
  const disputeTx = answer.json<{ dispute_tx: Hex }>().dispute_tx;
  await publicClient().waitForTransactionReceipt({ hash: disputeTx });
  const resolveTx = await walletClient(arbiterAccount).writeContract({
    address: contracts().disputeManager,
    abi: disputeManagerAbi,
    functionName: "resolveDispute",
    args: [jobIdToBytes32(jobId), true],
  });
  await mined(resolveTx);
  return { disputeTx, resolveTx };
}

/**
 * A second holder of GATEWAY_ROLE (given at deployment) opens a job for the client's key and never routes it,
 * so a test can end it with failJob or a timeout refund, the paths the gateway takes when things go wrong.
 */
export async function openUnroutedJob(client: ClientWallet): Promise<{ jobId: string; jobKey: Hex; opener: Account }> {
  // A role grant waits 2 days (DelayedAccessControl): the opener is the stack's spare gateway signer.
  const { account: opener } = spareGatewaySigner(0);
  const jobId = newJobId();
  const jobKey = jobIdToBytes32(jobId);
  await mined(
    await walletClient(opener).writeContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "openJob",
      args: [jobKey, keyHashOf(client.apiKey), modelKeyOf(JOB_MODEL), 100],
    }),
  );
  return { jobId, jobKey, opener };
}

/** The opener fails the job: its whole escrow goes back (JobFailed). */
export async function failJob(opener: Account, jobKey: Hex): Promise<Hex> {
  const hash = await walletClient(opener).writeContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "failJob",
    args: [jobKey],
  });
  await mined(hash);
  return hash;
}

/**
 * Moves chain time past the job timeout and its 300 s settle grace and refunds the job as anyone may then. Moves
 * chain time ahead by 7 minutes: run it after anything that needs a dispute window. Returns the refund transaction
 * (the gateway's sweeper may have sent it first).
 */
export async function timeoutRefund(jobKey: Hex): Promise<Hex> {
  await publicClient().request({ method: "evm_increaseTime" as never, params: [421] as never });
  await publicClient().request({ method: "evm_mine" as never, params: [] as never });
  const { account: anyone } = await freshAccount();
  await walletClient(anyone)
    .writeContract({ address: contracts().creditEscrow, abi: creditEscrowAbi, functionName: "refund", args: [jobKey] })
    .then(mined)
    .catch(() => undefined);
  const [refunded] = await publicClient().getContractEvents({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    eventName: "JobRefunded",
    args: { jobId: jobKey },
    fromBlock: 0n,
  });
  if (!refunded) throw new Error("the job was not refunded");
  return refunded.transactionHash;
}
