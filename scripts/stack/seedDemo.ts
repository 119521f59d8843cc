import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  http,
  keccak256,
  parseAbi,
  toBytes,
  type Account,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { z } from "zod";
import { apiKeyRegistryAbi } from "../../indexer/abis/ApiKeyRegistry.js";
import { creditEscrowAbi } from "../../indexer/abis/CreditEscrow.js";

// Hardhat's default mnemonic (docs/DESIGN.md, "Local accounts"): 0 owns the local tokens, 12 is the demo wallet.
export const LOCAL_MNEMONIC = "test test test test test test test test test test test junk";
export const DEMO_ACCOUNT_INDEX = 12;
const STABLECOIN_UNITS_PER_USDG = 1_000_000n;
const mintAbi = parseAbi(["function mint(address to, uint256 amount)"]);

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const deploymentsSchema = z.object({
  chainId: z.number().int(),
  contracts: z.object({ stablecoin: address, apiKeyRegistry: address, creditEscrow: address }),
});

export type LocalChain = { rpcUrl: string; deploymentsFile: string };

/** The local chain's account at `index` of Hardhat's default mnemonic. */
export function localAccount(index: number): Account {
  return mnemonicToAccount(LOCAL_MNEMONIC, { addressIndex: index });
}

/** The private key of a local account (workers and the gateway take keys, not mnemonics). */
export function localPrivateKey(index: number): Hex {
  const key = mnemonicToAccount(LOCAL_MNEMONIC, { addressIndex: index }).getHdKey().privateKey;
  if (!key) throw new Error(`no private key for local account ${index}`);
  return `0x${Buffer.from(key).toString("hex")}`;
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh API key: `svc_live_` + 32 alphanumeric characters from a CSPRNG (spec, Authentication). */
export function generateApiKey(): string {
  let body = "";
  for (let i = 0; i < 32; i++) body += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return `svc_live_${body}`;
}

function clientsFor(chain: LocalChain) {
  const deployments = deploymentsSchema.parse(JSON.parse(readFileSync(chain.deploymentsFile, "utf8")));
  const viemChain = { ...hardhat, id: deployments.chainId };
  const transport = http(chain.rpcUrl);
  const publicClient = createPublicClient({ chain: viemChain, transport });
  const walletFor = (account: Account) => createWalletClient({ account, chain: viemChain, transport });
  return { deployments, publicClient, walletFor };
}

async function waitMined(client: PublicClient, hash: Hex): Promise<void> {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
}

/** Local chains only: mints `usdg` stablecoin to `wallet` and deposits it into the escrow (100 credits each). */
export async function fundCredits(chain: LocalChain, wallet: Account, usdg: bigint): Promise<{ depositTx: Hex }> {
  const { deployments, publicClient, walletFor } = clientsFor(chain);
  const stablecoin = deployments.contracts.stablecoin as Address;
  const escrow = deployments.contracts.creditEscrow as Address;
  const amount = usdg * STABLECOIN_UNITS_PER_USDG;
  const owner = walletFor(localAccount(0));
  await waitMined(
    publicClient,
    await owner.writeContract({
      address: stablecoin,
      abi: mintAbi,
      functionName: "mint",
      args: [wallet.address, amount],
    }),
  );
  const client = walletFor(wallet);
  await waitMined(
    publicClient,
    await client.writeContract({ address: stablecoin, abi: erc20Abi, functionName: "approve", args: [escrow, amount] }),
  );
  const depositTx = await client.writeContract({
    address: escrow,
    abi: creditEscrowAbi,
    functionName: "deposit",
    args: [amount],
  });
  await waitMined(publicClient, depositTx);
  return { depositTx };
}

/** Registers `apiKey`'s keccak hash from `wallet` (the wallet's one key) and returns the transaction. */
export async function registerApiKey(chain: LocalChain, wallet: Account, apiKey: string): Promise<Hex> {
  const { deployments, publicClient, walletFor } = clientsFor(chain);
  const hash = await walletFor(wallet).writeContract({
    address: deployments.contracts.apiKeyRegistry as Address,
    abi: apiKeyRegistryAbi,
    functionName: "registerKey",
    args: [keccak256(toBytes(apiKey))],
  });
  await waitMined(publicClient, hash);
  return hash;
}

export type DemoSeed = { wallet: Address; apiKey: string; credits: number };

/** Funds the demo wallet (local account 12) with `usdg` stablecoin of credits and registers a fresh key for it. */
export async function seedDemo(chain: LocalChain, usdg = 100n): Promise<DemoSeed> {
  const wallet = localAccount(DEMO_ACCOUNT_INDEX);
  await fundCredits(chain, wallet, usdg);
  const apiKey = generateApiKey();
  await registerApiKey(chain, wallet, apiKey);
  return { wallet: wallet.address, apiKey, credits: Number(usdg * 100n) };
}
