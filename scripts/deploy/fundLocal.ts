// Funding helpers for local chains: mint the local tokens (the deployer owns them), buy credits for a
// wallet, fill the dispute reserve. Production has real tokens and never calls these.
import { type Account, type Address, type Hash, createTestClient, http } from "viem";
import { creditEscrowAbi, stablecoinAbi, stakeTokenAbi, type Deployment } from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { type ChainClients, chainClientsFor } from "./chainClients.js";

/** Stablecoin units per whole stablecoin (6 decimals). */
export const USDG_UNIT = 10n ** 6n;
/** Stake-token units per whole SVC (18 decimals). */
export const SVC_UNIT = 10n ** 18n;

/**
 * Receipt polling on a local node, ms. Automine has the receipt by the time the send returns and interval mining
 * within a block time, so viem's default for a chain it does not know (4 s) would only add waiting.
 */
export const LOCAL_POLLING_INTERVAL_MS = 50;

export interface LocalChain {
  rpcUrl: string;
  deployment: Deployment;
  /** Owner of the local tokens (the deployer); defaults to local account 0. */
  minter?: Account;
}

const clientsByKey = new Map<string, ChainClients>();

/**
 * Clients for a local chain signing as `account`, made once per node and account: the chain id is the
 * deployment's (no probe) and receipts are polled every LOCAL_POLLING_INTERVAL_MS.
 */
export function localChainClients(chain: LocalChain, account: Account): ChainClients {
  const key = `${chain.rpcUrl} ${chain.deployment.chainId} ${account.type} ${account.address}`;
  let clients = clientsByKey.get(key);
  if (!clients) {
    clients = chainClientsFor(chain.rpcUrl, chain.deployment.chainId, account, LOCAL_POLLING_INTERVAL_MS);
    clientsByKey.set(key, clients);
  }
  return clients;
}

/** Waits for a transaction's receipt; a revert is an error. */
export async function waitMined(clients: ChainClients, hash: Hash): Promise<void> {
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
}

// Deriving a mnemonic account costs tens of ms of CPU (all the local roles at once, hundreds): once per process.
let localAdmin: Account | undefined;

function minterOf(chain: LocalChain): Account {
  return chain.minter ?? (localAdmin ??= localAccount(LOCAL_ACCOUNT_INDEX.admin));
}

/** One mint by the local tokens' owner. */
export type Mint = { token: "stablecoin" | "stakeToken"; to: Address; amount: bigint };

/**
 * Sends `mints` from the minter back to back with consecutive nonces, then waits for all of them: one wait instead
 * of one per mint. The minter must send nothing else meanwhile (the nonces are taken up front).
 */
export async function mintAll(chain: LocalChain, mints: readonly Mint[]): Promise<void> {
  if (mints.length === 0) return;
  const minter = minterOf(chain);
  const clients = localChainClients(chain, minter);
  const { stablecoin, stakeToken } = chain.deployment.contracts;
  const firstNonce = await clients.publicClient.getTransactionCount({ address: minter.address, blockTag: "pending" });
  const hashes: Hash[] = [];
  for (const [index, { token, to, amount }] of mints.entries()) {
    const nonce = firstNonce + index;
    hashes.push(
      token === "stablecoin"
        ? await clients.walletClient.writeContract({
            address: stablecoin,
            abi: stablecoinAbi,
            functionName: "mint",
            args: [to, amount],
            nonce,
          })
        : await clients.walletClient.writeContract({
            address: stakeToken,
            abi: stakeTokenAbi,
            functionName: "mint",
            args: [to, amount],
            nonce,
          }),
    );
  }
  await Promise.all(hashes.map((hash) => waitMined(clients, hash)));
}

/** Mints `amount` stablecoin units to `to`. */
export async function mintStablecoin(chain: LocalChain, to: Address, amount: bigint): Promise<void> {
  await mintAll(chain, [{ token: "stablecoin", to, amount }]);
}

/** Mints `amount` stake-token units to `to`. */
export async function mintStake(chain: LocalChain, to: Address, amount: bigint): Promise<void> {
  await mintAll(chain, [{ token: "stakeToken", to, amount }]);
}

/** `wallet` approves and deposits `amount` stablecoin units it already holds; returns the deposit tx hash. */
export async function depositCredits(chain: LocalChain, wallet: Account, amount: bigint): Promise<Hash> {
  const clients = localChainClients(chain, wallet);
  const escrow = chain.deployment.contracts.creditEscrow;
  await waitMined(
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
  await waitMined(clients, hash);
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
  const clients = localChainClients(chain, minter);
  const escrow = chain.deployment.contracts.creditEscrow;
  await waitMined(
    clients,
    await clients.walletClient.writeContract({
      address: chain.deployment.contracts.stablecoin,
      abi: stablecoinAbi,
      functionName: "approve",
      args: [escrow, amount],
    }),
  );
  await waitMined(
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
