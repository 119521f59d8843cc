import type { Address, Hex } from "viem";
import { UNIT_PER_CREDIT } from "@credit-metered/client";
import { accountOf, contracts, creditEscrowAbi, publicClient, stablecoinAbi } from "./chain.js";

// The conservation audit from the chain alone (docs/DESIGN.md, "Value conservation"), shared by the end of the
// API suite (test/api/conservation.test.ts) and every fault of the chaos suite (test/chaos/).

export type EscrowEventName =
  | "Deposited"
  | "Withdrawn"
  | "JobOpened"
  | "JobSettled"
  | "JobFailed"
  | "JobRefunded"
  | "JobDisputeClosed"
  | "RestitutionPaid";

/** Every `eventName` the escrow ever emitted on this chain. */
export async function escrowEvents<const E extends EscrowEventName>(eventName: E) {
  return publicClient().getContractEvents({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    eventName,
    fromBlock: 0n,
    toBlock: "latest",
  });
}

/**
 * What the escrow holds in stablecoin against what it owes: every wallet's credits (replayed from the wallets that
 * ever deposited, and checked against the escrow's own `creditsOutstanding`), the dispute reserve and the payouts
 * (worker or treasury shares) a blocked recipient has not claimed yet (docs/DESIGN.md, "Value conservation").
 */
export async function escrowBalanceSheet(): Promise<{
  held: bigint;
  owed: bigint;
  credits: bigint;
  creditsOutstanding: bigint;
  reserve: bigint;
}> {
  const wallets = new Set((await escrowEvents("Deposited")).map((event) => event.args.wallet!.toLowerCase()));
  let credits = 0n;
  for (const wallet of wallets) {
    const account = await accountOf(wallet as Address);
    credits += account.available + account.locked;
  }
  const [ledger, held] = await Promise.all([
    publicClient().readContract({ address: contracts().creditEscrow, abi: creditEscrowAbi, functionName: "ledger" }),
    publicClient().readContract({
      address: contracts().stablecoin,
      abi: stablecoinAbi,
      functionName: "balanceOf",
      args: [contracts().creditEscrow],
    }),
  ]);
  return {
    held,
    owed: credits * UNIT_PER_CREDIT + ledger.reserve + ledger.claimableTotal + ledger.bonds,
    credits,
    creditsOutstanding: ledger.creditsOutstanding,
    reserve: ledger.reserve,
  };
}

/** Jobs opened on chain that no settlement, failure or refund has closed yet. */
export async function openJobsOnChain(): Promise<Hex[]> {
  const closing = await Promise.all(
    (["JobSettled", "JobFailed", "JobRefunded"] as const).map((name) => escrowEvents(name)),
  );
  const closed = new Set(closing.flat().map((event) => event.args.jobId));
  return (await escrowEvents("JobOpened")).map((event) => event.args.jobId!).filter((jobId) => !closed.has(jobId));
}

/** One wallet's ledger from its events, next to what the escrow holds for it. */
export async function walletLedger(wallet: Address) {
  const lower = wallet.toLowerCase();
  const mine = <T extends { args: { wallet?: Address } }>(events: T[]) =>
    events.filter((event) => event.args.wallet?.toLowerCase() === lower);
  const deposited = mine(await escrowEvents("Deposited")).reduce((sum, e) => sum + e.args.credits!, 0n);
  const withdrawn = mine(await escrowEvents("Withdrawn")).reduce((sum, e) => sum + e.args.credits!, 0n);
  const charged = mine(await escrowEvents("JobSettled")).reduce((sum, e) => sum + e.args.creditsCharged!, 0n);
  // Restitution of an upheld dispute, paid at once or later from the owed queue: RestitutionPaid covers both.
  const restored = mine(await escrowEvents("RestitutionPaid")).reduce((sum, e) => sum + e.args.credits!, 0n);
  const account = await accountOf(wallet);
  return { deposited, withdrawn, charged, restored, available: account.available, locked: account.locked };
}
