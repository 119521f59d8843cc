import { getAddress, type Address } from "viem";
import { creditEscrowAbi, stablecoinAbi, UNIT_PER_CREDIT, decodeProductLogs } from "@credit-metered/client";
import type { ChainReader } from "./chainReader.js";
import { logsByTopics } from "./logsByTopics.js";
import { reconcileWallet, type WalletReport } from "./reconcileWallet.js";

export interface EscrowAudit {
  wallets: { wallet: Address; report: WalletReport; available: bigint; locked: bigint }[];
  /** Stablecoin units the escrow holds, and what it owes: (Σ available + locked) × UNIT_PER_CREDIT + reserve +
   *  unclaimed payouts. */
  held: bigint;
  owed: bigint;
  reserve: bigint;
  problems: string[];
}

/**
 * Audits the whole escrow from the chain alone: every wallet that ever deposited or had a job replays to its state
 * (reconcileWallet), and the escrow's stablecoin balance equals every wallet's credits in stablecoin plus the
 * dispute reserve and the payouts (worker or treasury shares) a blocked recipient has not claimed. With `requireUnlocked`, a wallet still holding locked credits is a problem too (use it once
 * every job has ended).
 */
export async function auditEscrow(
  reader: ChainReader,
  { requireUnlocked = false }: { requireUnlocked?: boolean } = {},
): Promise<EscrowAudit> {
  const escrow = reader.deployment.contracts.creditEscrow;
  const events = decodeProductLogs(reader.deployment.contracts, await logsByTopics(reader, escrow, []));
  const wallets = [
    ...new Set(
      events
        .map((event) => event.args["wallet"])
        .filter((wallet): wallet is string => typeof wallet === "string")
        .map((wallet) => getAddress(wallet)),
    ),
  ];
  const problems: string[] = [];
  const audited: EscrowAudit["wallets"] = [];
  let credits = 0n;
  for (const wallet of wallets) {
    const report = await reconcileWallet(reader, wallet);
    const account = await reader.client.readContract({
      address: escrow,
      abi: creditEscrowAbi,
      functionName: "accountOf",
      args: [wallet],
    });
    const available = BigInt(account.available);
    const locked = BigInt(account.locked);
    credits += available + locked;
    problems.push(...report.problems.map((problem) => `${wallet}: ${problem}`));
    if (requireUnlocked && locked !== 0n) problems.push(`${wallet}: ${locked} credits still locked`);
    audited.push({ wallet, report, available, locked });
  }
  const ledger = await reader.client.readContract({ address: escrow, abi: creditEscrowAbi, functionName: "ledger" });
  const reserve = BigInt(ledger.reserve);
  const held = await reader.client.readContract({
    address: reader.deployment.contracts.stablecoin,
    abi: stablecoinAbi,
    functionName: "balanceOf",
    args: [escrow],
  });
  if (BigInt(ledger.creditsOutstanding) !== credits) {
    problems.push(`the escrow counts ${ledger.creditsOutstanding} credits outstanding, the wallets hold ${credits}`);
  }
  // Fees leave in each settlement transaction; a share a blocked recipient could not take stays claimable.
  // Workers' stablecoin bonds are held too (issue 22, "Fraud never pays").
  const owed = credits * UNIT_PER_CREDIT + reserve + BigInt(ledger.claimableTotal) + BigInt(ledger.bonds);
  if (held !== owed) {
    problems.push(
      `escrow holds ${held} stablecoin units, owes ${owed} ((Σ available + locked) × ${UNIT_PER_CREDIT} + reserve ${reserve} + claimable ${ledger.claimableTotal} + bonds ${ledger.bonds})`,
    );
  }
  return { wallets: audited, held, owed, reserve, problems };
}
