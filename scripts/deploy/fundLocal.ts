// Funding helpers for local chains: mint the local tokens (the deployer owns them), buy credits for a
// wallet, fill the dispute reserve. Production has real tokens and never calls these.
import { type Account, type Address, type Hash, createTestClient, http } from "viem";
import { creditEscrowAbi, stablecoinAbi, stakeTokenAbi, type Deployment } from "@credit-metered/client";
import { localAccounts } from "@credit-metered/client/local";
import { type ChainClients, createChainClients } from "./chainClients.js";

/** Stablecoin units per whole stablecoin (6 decimals). */
export const USDG_UNIT = 10n ** 6n;
/** Stake-token units per whole SVC (18 decimals). */
export const SVC_UNIT = 10n ** 18n;

export interface LocalChain {
  rpcUrl: string;
  deployment: Deployment;
  /** Owner of the local tokens (the deployer); defaults to local account 0. */
  minter?: Account;
}

async function waitFor(clients: ChainClients, hash: Hash): Promise<void> {
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
}

function minterOf(chain: LocalChain): Account {
  return chain.minter ?? localAccounts().admin;
}

/** Mints `amount` stablecoin units to `to`. */
export async function mintStablecoin(chain: LocalChain, to: Address, amount: bigint): Promise<void> {
  const clients = await createChainClients(chain.rpcUrl, minterOf(chain));
  const hash = await clients.walletClient.writeContract({
    address: chain.deployment.contracts.stablecoin,
    abi: stablecoinAbi,
    functionName: "mint",
    args: [to, amount],
  });
  await waitFor(clients, hash);
}

/** Mints `amount` stake-token units to `to`. */
export async function mintStake(chain: LocalChain, to: Address, amount: bigint): Promise<void> {
  const clients = await createChainClients(chain.rpcUrl, minterOf(chain));
  const hash = await clients.walletClient.writeContract({
    address: chain.deployment.contracts.stakeToken,
    abi: stakeTokenAbi,
    functionName: "mint",
    args: [to, amount],
  });
  await waitFor(clients, hash);
}

/** `wallet` approves and deposits `amount` stablecoin units it already holds; returns the deposit tx hash. */
export async function depositCredits(chain: LocalChain, wallet: Account, amount: bigint): Promise<Hash> {
  const clients = await createChainClients(chain.rpcUrl, wallet);
  const escrow = chain.deployment.contracts.creditEscrow;
  await waitFor(
    clients,
    await clients.walletClient.writeContract({
      address: chain.deployment.contracts.stablecoin,
      abi: stablecoinAbi,
      functionName: "approve",
      args: [escrow, amount],
    }),
  );
  const hash = await clients.walletClient.writeContract({
    address: escrow,
    abi: creditEscrowAbi,
    functionName: "deposit",
    args: [amount],
  });
  await waitFor(clients, hash);
  return hash;
}

/** Mints `amount` stablecoin units to `wallet` and deposits them as credits (100 credits per stablecoin). */
export async function fundWallet(chain: LocalChain, wallet: Account, amount: bigint): Promise<Hash> {
  await mintStablecoin(chain, wallet.address, amount);
  return depositCredits(chain, wallet, amount);
}

/** Mints `amount` stablecoin units to the minter and adds them to the escrow's dispute reserve. */
export async function fundDisputeReserve(chain: LocalChain, amount: bigint): Promise<void> {
  const minter = minterOf(chain);
  await mintStablecoin(chain, minter.address, amount);
  const clients = await createChainClients(chain.rpcUrl, minter);
  const escrow = chain.deployment.contracts.creditEscrow;
  await waitFor(
    clients,
    await clients.walletClient.writeContract({
      address: chain.deployment.contracts.stablecoin,
      abi: stablecoinAbi,
      functionName: "approve",
      args: [escrow, amount],
    }),
  );
  await waitFor(
    clients,
    await clients.walletClient.writeContract({
      address: escrow,
      abi: creditEscrowAbi,
      functionName: "fundReserve",
      args: [amount],
    }),
  );
}

/** Sets an account's ETH balance on a Hardhat node (for accounts outside the funded mnemonic range). */
export async function setEthBalance(rpcUrl: string, address: Address, wei: bigint): Promise<void> {
  const testClient = createTestClient({ mode: "hardhat", transport: http(rpcUrl) });
  await testClient.setBalance({ address, value: wei });
}
