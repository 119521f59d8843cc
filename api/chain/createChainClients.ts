import {
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  type PublicClient,
  type WalletClient,
  type Account,
  type Chain,
  type Transport,
} from "viem";
import { transactionAccount } from "./secp256k1.js";
import { hedgedTransport } from "./hedgedTransport.js";

export interface ChainClients {
  publicClient: PublicClient<Transport, Chain>;
  walletClient: WalletClient<Transport, Chain, Account>;
  chain: Chain;
  /** Every RPC endpoint, in the operator's order (transactions are broadcast to all of them). */
  rpcUrls: readonly string[];
}

/** With several endpoints, one that has not answered within this long gets the next asked alongside it. */
const HEDGE_AFTER_MS = 250;

/**
 * viem clients for the settlement chain; the wallet client signs as the gateway (GATEWAY_ROLE). With several RPC
 * URLs, reads are hedged across them (api/chain/hedgedTransport.ts): losing an endpoint costs no request and at
 * most HEDGE_AFTER_MS. Every JSON-RPC attempt gives up after `timeoutMs`; timeouts and connection errors (a node
 * resuming after a stall resets its keep-alive connections) are retried.
 */
export function createChainClients(
  rpcUrls: readonly string[],
  chainId: number,
  privateKey: Hex,
  pollingIntervalMs: number,
  timeoutMs = 5_000,
): ChainClients {
  if (rpcUrls.length === 0) throw new Error("the chain needs at least one RPC URL");
  const chain = defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [...rpcUrls] } },
  });
  const transport = hedgedTransport({
    urls: rpcUrls,
    timeoutMs,
    hedgeAfterMs: HEDGE_AFTER_MS,
    // One endpoint has no other to hedge to: it gets one more try, as viem's http transport gave it.
    retryCount: rpcUrls.length === 1 ? 2 : 1,
  });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: pollingIntervalMs });
  const walletClient = createWalletClient({
    chain,
    transport,
    account: transactionAccount(privateKey),
    pollingInterval: pollingIntervalMs,
  });
  return { publicClient, walletClient, chain, rpcUrls };
}
