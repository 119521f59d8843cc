import {
  createPublicClient,
  createWalletClient,
  http,
  type Account,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { hardhat } from "viem/chains";
import {
  CREDITS_PER_USDG,
  LOCAL_ACCOUNT_INDEX,
  apiKeyRegistryAbi,
  creditEscrowAbi,
  generateApiKey,
  keyHashOf,
  loadDeployment,
  localAccount,
  stablecoinAbi,
} from "../../contracts/client/index.js";

const STABLECOIN_UNITS_PER_USDG = 1_000_000n;

export type LocalChain = { rpcUrl: string; deploymentsFile: string };

function clientsFor(chain: LocalChain) {
  const deployment = loadDeployment(chain.deploymentsFile);
  const viemChain = { ...hardhat, id: deployment.chainId };
  const transport = http(chain.rpcUrl);
  const publicClient = createPublicClient({ chain: viemChain, transport });
  const walletFor = (account: Account) => createWalletClient({ account, chain: viemChain, transport });
  return { deployment, publicClient, walletFor };
}

async function waitMined(client: PublicClient, hash: Hex): Promise<void> {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
}

/**
 * Local chains only: the token owner (local account 0) mints `usdg` stablecoin to `wallet`, which deposits it
 * into the escrow (100 credits per stablecoin).
 */
export async function fundCredits(chain: LocalChain, wallet: Account, usdg: bigint): Promise<{ depositTx: Hex }> {
  const { deployment, publicClient, walletFor } = clientsFor(chain);
  const { stablecoin, creditEscrow } = deployment.contracts;
  const amount = usdg * STABLECOIN_UNITS_PER_USDG;
  const owner = walletFor(localAccount(LOCAL_ACCOUNT_INDEX.admin));
  await waitMined(
    publicClient,
    await owner.writeContract({
      address: stablecoin,
      abi: stablecoinAbi,
      functionName: "mint",
      args: [wallet.address, amount],
    }),
  );
  const client = walletFor(wallet);
  await waitMined(
    publicClient,
    await client.writeContract({
      address: stablecoin,
      abi: stablecoinAbi,
      functionName: "approve",
      args: [creditEscrow, amount],
    }),
  );
  const depositTx = await client.writeContract({
    address: creditEscrow,
    abi: creditEscrowAbi,
    functionName: "deposit",
    args: [amount],
  });
  await waitMined(publicClient, depositTx);
  return { depositTx };
}

/** Registers `apiKey`'s keccak hash from `wallet` (the wallet's one key) and returns the transaction. */
export async function registerApiKey(chain: LocalChain, wallet: Account, apiKey: string): Promise<Hex> {
  const { deployment, publicClient, walletFor } = clientsFor(chain);
  const hash = await walletFor(wallet).writeContract({
    address: deployment.contracts.apiKeyRegistry,
    abi: apiKeyRegistryAbi,
    functionName: "registerKey",
    args: [keyHashOf(apiKey)],
  });
  await waitMined(publicClient, hash);
  return hash;
}

export type DemoSeed = { wallet: Address; apiKey: string; credits: number };

/** Funds the demo wallet (local account 12) with `usdg` stablecoin of credits and registers a fresh key for it. */
export async function seedDemo(chain: LocalChain, usdg = 100n): Promise<DemoSeed> {
  const wallet = localAccount(LOCAL_ACCOUNT_INDEX.demoWallet);
  await fundCredits(chain, wallet, usdg);
  const apiKey = generateApiKey();
  await registerApiKey(chain, wallet, apiKey);
  return { wallet: wallet.address, apiKey, credits: Number(usdg * BigInt(CREDITS_PER_USDG)) };
}
