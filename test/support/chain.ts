import {
  createPublicClient,
  createWalletClient,
  http,
  parseEther,
  type Account,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  stablecoinAbi,
  workerRegistryAbi,
  type Deployment,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { stackInfo } from "./stackInfo.js";

export { apiKeyRegistryAbi, creditEscrowAbi, disputeManagerAbi, modelCatalogAbi, stablecoinAbi, workerRegistryAbi };

/** Local accounts with roles (docs/DESIGN.md): 0 admin + governance + token owner, 2 arbiter + operator. */
export const adminAccount = localAccount(LOCAL_ACCOUNT_INDEX.admin);
export const operatorAccount = localAccount(LOCAL_ACCOUNT_INDEX.operator);
export const arbiterAccount = localAccount(LOCAL_ACCOUNT_INDEX.arbiter);

export type StackContracts = Deployment["contracts"];

export function contracts(): StackContracts {
  return stackInfo().contracts;
}

function viemChain() {
  return { ...hardhat, id: stackInfo().chainId };
}

let publicClientCache: PublicClient | undefined;

/** A viem public client on the stack's chain (reads, events, receipts). */
export function publicClient(): PublicClient {
  publicClientCache ??= createPublicClient({
    chain: viemChain(),
    transport: http(stackInfo().rpcUrl),
    pollingInterval: 50,
  });
  return publicClientCache;
}

/** A viem wallet client for `account` on the stack's chain. */
export function walletClient(account: Account) {
  return createWalletClient({ account, chain: viemChain(), transport: http(stackInfo().rpcUrl) });
}

/** Waits for `hash` to be mined and fails the test if it reverted. */
export async function mined(hash: Hex) {
  const receipt = await publicClient().waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

/** A fresh account with 10 ETH for gas (Hardhat's `hardhat_setBalance`), and its private key. */
/**
 * Spare gateway signer `i` of the test stack: it holds the gateway roles from deployment (a grant after
 * deployment waits 2 days, DelayedAccessControl) and no gateway process uses it. One test at a time per signer.
 */
export function spareGatewaySigner(i: number): { account: Account; privateKey: Hex } {
  const privateKey = stackInfo().spareGatewaySignerKeys[i];
  if (!privateKey) throw new Error(`the test stack has no spare gateway signer ${i}`);
  return { account: privateKeyToAccount(privateKey), privateKey };
}

export async function freshAccount(): Promise<{ account: Account; privateKey: Hex }> {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  await publicClient().request({
    method: "hardhat_setBalance" as never,
    params: [account.address, `0x${parseEther("10").toString(16)}`] as never,
  });
  return { account, privateKey };
}

/** The wallet's credits as the escrow holds them. */
export async function accountOf(wallet: Address) {
  return publicClient().readContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "accountOf",
    args: [wallet],
  });
}

/** Chain time: the latest block's timestamp. */
export async function chainTime(): Promise<bigint> {
  return (await publicClient().getBlock()).timestamp;
}
