import type { Hex, PublicClient } from "viem";
import type { AppConfig } from "../appTypes";
import type { ConnectedWallet } from "../wallet/ConnectedWallet";
import { apiKeyRegistryAbi, keyCommitmentOf } from "@credit-metered/client";

async function send(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  call:
    | { functionName: "registerKey" | "rotateKey" | "commitKey"; args: [Hex] }
    | { functionName: "revokeKey"; args: [] },
): Promise<Hex> {
  const hash = await wallet.client.writeContract({
    account: wallet.client.account,
    chain: wallet.client.chain,
    address: config.contracts.apiKeyRegistry,
    abi: apiKeyRegistryAbi,
    ...call,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error("The key transaction was reverted by the chain.");
  return hash;
}

/**
 * Registers a new key's hash; with an active key already, rotates to it (the old key stops working). Two
 * transactions: a commitment that hides the hash, then, once it is mined, the registration (ApiKeyRegistry's
 * commit–reveal: a wallet that copies the hash from the pending registration cannot keep it).
 */
export async function registerOrRotateKey(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  keyHash: Hex,
  hasActiveKey: boolean,
): Promise<Hex> {
  const account = wallet.client.account.address;
  await send(config, publicClient, wallet, { functionName: "commitKey", args: [keyCommitmentOf(account, keyHash)] });
  return send(config, publicClient, wallet, {
    functionName: hasActiveKey ? "rotateKey" : "registerKey",
    args: [keyHash],
  });
}

/** Revokes the wallet's active key. */
export function revokeKey(config: AppConfig, publicClient: PublicClient, wallet: ConnectedWallet): Promise<Hex> {
  return send(config, publicClient, wallet, { functionName: "revokeKey", args: [] });
}
