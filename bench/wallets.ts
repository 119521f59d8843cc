import { createPublicClient, createWalletClient, defineChain, http, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  generateApiKey,
  keyCommitmentOf,
  keyHashOf,
  stablecoinAbi,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { loadDeployment } from "@credit-metered/client/node";
import { setIntervalMining } from "../scripts/stack/startChain.js";
import { waitFor } from "../scripts/stack/waitFor.js";
import type { StackInfo } from "../scripts/stack/startLocalStack.js";

/** Stablecoin units per whole stablecoin (6 decimals; 100 credits each). */
const USDG_UNIT = 10n ** 6n;
/** Every RPC call of the seeding gives up after this long. */
const RPC_TIMEOUT_MS = 15_000;

export type BenchWallet = { wallet: Address; apiKey: string };

/**
 * `count` new client wallets, each with `usdg` stablecoin of credits and its own registered API key, returned once
 * every gateway of `apiUrls` accepts every key. The bench's traffic "spread over many wallets" uses them (real API
 * traffic comes from many wallets; one wallet's jobs queue on that wallet's ledger row). Seeding is sent all at
 * once: the admin sends its mints with consecutive nonces, each wallet then approves, deposits and registers its key on its
 * own nonce sequence. An interval-mining chain is put on automine meanwhile (as the stack's own set-up is) and back.
 */
export async function seedWallets(
  info: StackInfo,
  apiUrls: string[],
  count: number,
  usdg: bigint,
): Promise<BenchWallet[]> {
  const deployment = loadDeployment(info.deploymentsFile);
  const chain = defineChain({
    id: info.chainId,
    name: `chain-${info.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [info.rpcUrl] } },
  });
  const transport = http(info.rpcUrl, { timeout: RPC_TIMEOUT_MS });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const mined = async (hash: Hex) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 60_000 });
    if (receipt.status !== "success") throw new Error(`wallet seeding: ${hash} reverted`);
  };
  const accounts = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  if (info.chainBlockTime) await publicClient.request({ method: "evm_setAutomine" as never, params: [true] as never });
  try {
    for (const account of accounts)
      await publicClient.request({
        method: "hardhat_setBalance" as never,
        params: [account.address, `0x${parseEther("10").toString(16)}`] as never,
      });
    const admin = createWalletClient({ chain, transport, account: localAccount(LOCAL_ACCOUNT_INDEX.admin) });
    const firstNonce = await publicClient.getTransactionCount({ address: admin.account.address, blockTag: "pending" });
    const amount = usdg * USDG_UNIT;
    // Sent one after another (not mined one after another): an automining node refuses a nonce that arrives ahead
    // of its predecessor ("nonce too high"), and concurrent sends may arrive out of order.
    const mints: Hex[] = [];
    for (const [i, account] of accounts.entries()) {
      mints.push(
        await admin.writeContract({
          address: deployment.contracts.stablecoin,
          abi: stablecoinAbi,
          functionName: "mint",
          args: [account.address, amount],
          nonce: firstNonce + i,
        }),
      );
    }
    await Promise.all(mints.map(mined));
    return await Promise.all(
      accounts.map(async (account) => {
        const client = createWalletClient({ chain, transport, account });
        const escrow = deployment.contracts.creditEscrow;
        await mined(
          await client.writeContract({
            address: deployment.contracts.stablecoin,
            abi: stablecoinAbi,
            functionName: "approve",
            args: [escrow, amount],
          }),
        );
        await mined(
          await client.writeContract({
            address: escrow,
            abi: creditEscrowAbi,
            functionName: "deposit",
            args: [amount],
          }),
        );
        const apiKey = generateApiKey();
        const keyHash = keyHashOf(apiKey);
        const registry = deployment.contracts.apiKeyRegistry;
        await mined(
          await client.writeContract({
            address: registry,
            abi: apiKeyRegistryAbi,
            functionName: "commitKey",
            args: [keyCommitmentOf(account.address, keyHash)],
          }),
        );
        await mined(
          await client.writeContract({
            address: registry,
            abi: apiKeyRegistryAbi,
            functionName: "registerKey",
            args: [keyHash],
          }),
        );
        return { wallet: account.address, apiKey };
      }),
    ).then(async (wallets) => {
      for (const apiUrl of apiUrls)
        for (const { apiKey } of wallets)
          await waitFor(`bench key ${apiKey.slice(0, 14)}… accepted by ${apiUrl}`, async () => {
            const response = await fetch(`${apiUrl}/v1/account`, {
              headers: { authorization: `Bearer ${apiKey}` },
              signal: AbortSignal.timeout(5_000),
            });
            return response.status === 200;
          });
      return wallets;
    });
  } finally {
    if (info.chainBlockTime) await setIntervalMining(info.rpcUrl, info.chainBlockTime);
  }
}
