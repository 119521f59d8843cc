import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Account,
  type Chain,
  type Transport,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface ChainClients {
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
  chain: Chain;
}

/** viem clients for the settlement chain; the wallet client signs as the gateway (GATEWAY_ROLE). */
export function createChainClients(
  rpcUrl: string,
  chainId: number,
  privateKey: Hex,
  pollingIntervalMs: number,
): ChainClients {
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { retryCount: 2, timeout: 20_000 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(privateKey),
    pollingInterval: pollingIntervalMs,
  });
  return { publicClient, walletClient, chain };
}
