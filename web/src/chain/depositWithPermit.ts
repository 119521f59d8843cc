import type { Hex, PublicClient } from "viem";
import type { AppConfig } from "../appTypes";
import type { ConnectedWallet } from "../wallet/ConnectedWallet";
import { creditEscrowAbi, permitSignatureParts, permitTypedData, stablecoinAbi } from "@credit-metered/client";

/** How long the permit signature stays usable: it only has to outlive the deposit transaction. */
const PERMIT_LIFETIME_S = 30 * 60;

/**
 * Deposits `amount` stablecoin units as credits with one EIP-2612 permit signature and one `depositWithPermit`
 * transaction (no separate approval). Resolves with the mined transaction's hash.
 */
export async function depositWithPermit(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  amount: bigint,
): Promise<Hex> {
  const token = config.contracts.stablecoin;
  const escrow = config.contracts.creditEscrow;
  const [domain, nonce] = await Promise.all([
    publicClient.readContract({ address: token, abi: stablecoinAbi, functionName: "eip712Domain" }),
    publicClient.readContract({ address: token, abi: stablecoinAbi, functionName: "nonces", args: [wallet.address] }),
  ]);
  const [, name, version] = domain;
  const deadline = BigInt(Math.floor(Date.now() / 1000) + PERMIT_LIFETIME_S);
  const signature = await wallet.client.signTypedData({
    account: wallet.client.account,
    ...permitTypedData(
      { name, version, chainId: config.chain_id, token },
      { owner: wallet.address, spender: escrow, value: amount, nonce, deadline },
    ),
  });
  const { v, r, s } = permitSignatureParts(signature);
  const hash = await wallet.client.writeContract({
    account: wallet.client.account,
    chain: wallet.client.chain,
    address: escrow,
    abi: creditEscrowAbi,
    functionName: "depositWithPermit",
    args: [amount, deadline, v, r, s],
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error("The deposit transaction was reverted by the chain.");
  return hash;
}
