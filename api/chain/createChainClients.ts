import {
  createPublicClient,
  createWalletClient,
  defineChain,
  fallback,
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
  /** Every RPC endpoint, in the operator's order (transactions are broadcast to all of them). */
  rpcUrls: readonly string[];
}

/** How often the fallback transport ranks the endpoints by latency and stability. */
const RANK_INTERVAL_MS = 5_000;

/**
 * viem clients for the settlement chain; the wallet client signs as the gateway (GATEWAY_ROLE). Reads go through
 * viem's `fallback` transport over every RPC URL, ranked by latency and stability: an endpoint that fails or times
 * out hands the same request to the next one, so losing an endpoint costs no request. Every JSON-RPC attempt gives
 * up after `timeoutMs`; timeouts and connection errors (a node resuming after a stall resets its keep-alive
 * connections) are retried once on the same endpoint before the next is tried.
 */
export function createChainClients(
  rpcUrls: readonly string[],
  chainId: number,
  privateKey: Hex,
  pollingIntervalMs: number,
  timeoutMs = 5_000,
): ChainClients {
  const [first] = rpcUrls;
  if (first === undefined) throw new Error("the chain needs at least one RPC URL");
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [...rpcUrls] } },
  });
  const endpoint = (url: string) => http(url, { retryCount: 1, retryDelay: 100, timeout: timeoutMs });
  const transport =
    rpcUrls.length === 1
      ? http(first, { retryCount: 2, retryDelay: 100, timeout: timeoutMs })
      : fallback(rpcUrls.map(endpoint), { rank: { interval: RANK_INTERVAL_MS }, retryCount: 1 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({
    chain,
    transport,
    account: privateKeyToAccount(privateKey),
    pollingInterval: pollingIntervalMs,
  });
  return { publicClient, walletClient, chain, rpcUrls };
}
