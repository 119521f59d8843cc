import { describe, expect, it } from "vitest";
import type { Address } from "viem";
import { UNIT_PER_CREDIT } from "../../contracts/client/index.js";
import { rawRequest } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, publicClient, stablecoinAbi } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { waitUntil } from "../support/waitUntil.js";

// Runs after every other file (test/support/sequencer.ts): an audit of what the suite did, from the chain alone.

async function escrowEvents<
  const E extends
    | "Deposited"
    | "Withdrawn"
    | "JobOpened"
    | "JobSettled"
    | "JobFailed"
    | "JobRefunded"
    | "JobDisputeClosed",
>(eventName: E) {
  return publicClient().getContractEvents({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    eventName,
    fromBlock: 0n,
    toBlock: "latest",
  });
}

describe("credits are conserved (after the whole suite)", () => {
  it("the demo wallet: deposits − withdrawals − charges + restored = available + locked, with nothing locked", async () => {
    const wallet = stackInfo().demo.wallet.toLowerCase();
    // Every job of the suite has ended: no credits stay locked.
    await waitUntil("no locked credits left", async () => (await accountOf(wallet as Address)).locked === 0n, {
      timeoutMs: 30_000,
    });
    const mine = <T extends { args: { wallet?: Address } }>(events: T[]) =>
      events.filter((event) => event.args.wallet?.toLowerCase() === wallet);
    const deposited = mine(await escrowEvents("Deposited")).reduce((sum, e) => sum + e.args.credits!, 0n);
    const withdrawn = mine(await escrowEvents("Withdrawn")).reduce((sum, e) => sum + e.args.credits!, 0n);
    const settled = mine(await escrowEvents("JobSettled"));
    const charged = settled.reduce((sum, e) => sum + e.args.creditsCharged!, 0n);
    const restored = mine(await escrowEvents("JobDisputeClosed")).reduce((sum, e) => sum + e.args.creditsRestored!, 0n);
    const account = await accountOf(wallet as Address);

    expect(deposited).toBeGreaterThan(0n);
    expect(deposited - withdrawn - charged + restored).toBe(account.available + account.locked);
    expect(account.locked).toBe(0n);

    // The gateway reports the same balance.
    const api = (await rawRequest("GET", "/v1/account", { apiKey: stackInfo().demo.apiKey })).json<{
      credits_remaining: number;
    }>();
    expect(BigInt(api.credits_remaining)).toBe(account.available);
  });

  it("every job the suite opened has ended: settled, failed or refunded, none left open", async () => {
    const ended = async () => {
      const closing = await Promise.all(
        (["JobSettled", "JobFailed", "JobRefunded"] as const).map((name) => escrowEvents(name)),
      );
      return new Set(closing.flat().map((event) => event.args.jobId));
    };
    const opened = (await escrowEvents("JobOpened")).map((event) => event.args.jobId);
    expect(opened.length).toBeGreaterThan(0);
    await waitUntil("every opened job ended", async () => {
      const done = await ended();
      return opened.every((jobId) => done.has(jobId));
    });
  });

  it("the escrow holds exactly every wallet's credits plus the dispute reserve and the fees accrued for the treasury", async () => {
    const wallets = new Set((await escrowEvents("Deposited")).map((event) => event.args.wallet!.toLowerCase()));
    let credits = 0n;
    for (const wallet of wallets) {
      const account = await accountOf(wallet as Address);
      credits += account.available + account.locked;
    }
    const ledger = await publicClient().readContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "ledger",
    });
    expect(ledger.creditsOutstanding).toBe(credits);
    const held = await publicClient().readContract({
      address: contracts().stablecoin,
      abi: stablecoinAbi,
      functionName: "balanceOf",
      args: [contracts().creditEscrow],
    });
    // Fees accrue in the escrow until `sweepFees`; payouts a blocked worker could not take stay claimable.
    expect(held).toBe(credits * UNIT_PER_CREDIT + ledger.reserve + ledger.feesAccrued + ledger.claimableTotal);
  });
});
