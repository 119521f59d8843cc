import {
  type Account,
  type Chain,
  type PublicClient,
  type Transport,
  type WalletClient,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
} from "viem";

export interface ChainClients {
  chain: Chain;
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
}

/** Public and wallet clients for `rpcUrl`, signing as `account`; the chain id is asked from the node. */
export async function createChainClients(rpcUrl: string, account: Account): Promise<ChainClients> {
  const probe = createPublicClient({ transport: http(rpcUrl) });
  return chainClientsFor(rpcUrl, await probe.getChainId(), account);
}

/**
 * Public and wallet clients for a chain whose id is known; `pollingInterval` (ms) for receipts and blocks, default
 * viem's (4 s for a chain it does not know).
 */
export function chainClientsFor(
  rpcUrl: string,
  chainId: number,
  account: Account,
  pollingInterval?: number,
): ChainClients {
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  const interval = pollingInterval === undefined ? {} : { pollingInterval };
  const publicClient = createPublicClient({ chain, transport, ...interval });
  const walletClient = createWalletClient({ chain, transport, account, ...interval });
  return { chain, publicClient, walletClient };
}
