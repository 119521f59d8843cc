import { createWalletClient, http, type Address, type Hex, type PublicClient } from "viem";
import { stablecoinAbi, type Deployment } from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";

/**
 * Local chains only (dev mode): the deployer, who owns the local stablecoin, mints `amount` units to `to`, so a
 * development wallet can try funding. Production has a real stablecoin and never mounts this.
 */
export async function mintTestStablecoin(
  params: { rpcUrl: string; deployment: Deployment; publicClient: PublicClient },
  to: Address,
  amount: bigint,
): Promise<Hex> {
  const minter = localAccount(LOCAL_ACCOUNT_INDEX.admin);
  const chain = {
    id: params.deployment.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [params.rpcUrl] } },
  } as const;
  const hash = await createWalletClient({ account: minter, chain, transport: http(params.rpcUrl) }).writeContract({
    address: params.deployment.contracts.stablecoin,
    abi: stablecoinAbi,
    functionName: "mint",
    args: [to, amount],
  });
  const receipt = await params.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== "success") throw new Error(`mint ${hash} reverted`);
  return hash;
}
