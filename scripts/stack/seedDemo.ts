import type { Account, Address, Hex } from "viem";
import {
  CREDITS_PER_USDG,
  apiKeyRegistryAbi,
  keyCommitmentOf,
  keyHashOf,
  generateApiKey,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { loadDeployment } from "@credit-metered/client/node";
import { USDG_UNIT, fundDisputeReserve, fundWallet, localChainClients } from "../deploy/fundLocal.js";

export type LocalChain = { rpcUrl: string; deploymentsFile: string };

/** Local chains only: mints `usdg` whole stablecoin to `wallet`, which deposits it (100 credits per stablecoin). */
export async function fundCredits(chain: LocalChain, wallet: Account, usdg: bigint): Promise<{ depositTx: Hex }> {
  const deployment = loadDeployment(chain.deploymentsFile);
  const depositTx = await fundWallet({ rpcUrl: chain.rpcUrl, deployment }, wallet, usdg * USDG_UNIT);
  return { depositTx };
}

/** Local chains only: fills the escrow's dispute reserve (upheld disputes are repaid from it). */
export async function fundReserve(chain: LocalChain, usdg: bigint): Promise<void> {
  const deployment = loadDeployment(chain.deploymentsFile);
  await fundDisputeReserve({ rpcUrl: chain.rpcUrl, deployment }, usdg * USDG_UNIT);
}

/**
 * Registers `apiKey`'s keccak hash from `wallet` (the wallet's one key) and returns the registration transaction:
 * first the commitment, then, once it is mined, the registration (ApiKeyRegistry's commit–reveal).
 */
export async function registerApiKey(chain: LocalChain, wallet: Account, apiKey: string): Promise<Hex> {
  const deployment = loadDeployment(chain.deploymentsFile);
  const { walletClient, publicClient } = localChainClients({ rpcUrl: chain.rpcUrl, deployment }, wallet);
  const keyHash = keyHashOf(apiKey);
  const mined = async (functionName: "commitKey" | "registerKey", arg: Hex): Promise<Hex> => {
    const hash = await walletClient.writeContract({
      address: deployment.contracts.apiKeyRegistry,
      abi: apiKeyRegistryAbi,
      functionName,
      args: [arg],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${functionName} ${hash} reverted`);
    return hash;
  };
  await mined("commitKey", keyCommitmentOf(wallet.address, keyHash));
  return mined("registerKey", keyHash);
}

export type DemoSeed = { wallet: Address; apiKey: string; credits: number };

/**
 * Seeds a fresh local chain for people: the demo wallet (local account 12) gets `usdg` stablecoin of credits
 * and a new API key; the dispute reserve gets `reserveUsdg` so an upheld dispute can be repaid.
 */
export async function seedDemo(chain: LocalChain, { usdg = 100n, reserveUsdg = 1_000n } = {}): Promise<DemoSeed> {
  const wallet = localAccount(LOCAL_ACCOUNT_INDEX.demoWallet);
  await fundCredits(chain, wallet, usdg);
  const apiKey = generateApiKey();
  await registerApiKey(chain, wallet, apiKey);
  if (reserveUsdg > 0n) await fundReserve(chain, reserveUsdg);
  return { wallet: wallet.address, apiKey, credits: Number(usdg * BigInt(CREDITS_PER_USDG)) };
}
