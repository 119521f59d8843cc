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

/**
 * viem clients for the settlement chain; the wallet client signs as the gateway (GATEWAY_ROLE). Every JSON-RPC
 * attempt gives up after `timeoutMs`; timeouts and connection errors (a node resuming after a stall resets its
 * keep-alive connections) are retried twice with backoff, so a reset costs a retry, not a failed request.
 */
export function createChainClients(
  rpcUrl: string,
  chainId: number,
  privateKey: Hex,
  pollingIntervalMs: number,
  timeoutMs = 5_000,
): ChainClients {
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { retryCount: 2, retryDelay: 100, timeout: timeoutMs });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(privateKey),
    pollingInterval: pollingIntervalMs,
  });
  return { publicClient, walletClient, chain };
}
