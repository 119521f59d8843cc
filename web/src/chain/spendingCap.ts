import type { Address, Hex, PublicClient } from "viem";
import type { AppConfig } from "../appTypes";
import type { ConnectedWallet } from "../wallet/ConnectedWallet";
import { creditEscrowAbi } from "@credit-metered/client";

export interface SpendingCap {
  /** Credits per rolling hour; zero means no cap. */
  cap: bigint;
  /** Credits counted against the cap right now. */
  lockedInWindow: bigint;
  /** When the oldest counted credits drop out (unix seconds; zero when nothing is counted). */
  nextRoomAt: bigint;
}

/** The wallet's own hourly cap as the escrow enforces it (CreditEscrow.spendingOf). */
export async function readSpendingCap(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: Address,
): Promise<SpendingCap> {
  const [cap, lockedInWindow, nextRoomAt] = await publicClient.readContract({
    address: config.contracts.creditEscrow,
    abi: creditEscrowAbi,
    functionName: "spendingOf",
    args: [wallet],
  });
  return { cap, lockedInWindow, nextRoomAt: BigInt(nextRoomAt) };
}

/** Sets (or, with zero, removes) the wallet's cap. Only the wallet itself can: a stolen gateway key cannot lift it. */
export async function setSpendingCap(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  creditsPerHour: bigint,
): Promise<Hex> {
  const hash = await wallet.client.writeContract({
    account: wallet.client.account,
    chain: wallet.client.chain,
    address: config.contracts.creditEscrow,
    abi: creditEscrowAbi,
    functionName: "setSpendingCap",
    args: [creditsPerHour],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error("The cap transaction was reverted by the chain.");
  return hash;
}
