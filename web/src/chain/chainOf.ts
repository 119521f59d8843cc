import { defineChain, type Chain } from "viem";
import type { AppConfig } from "../appTypes";

/** The viem chain of the app's deployment. */
export function chainOf(config: AppConfig): Chain {
  return defineChain({
    id: config.chain_id,
    name: config.chain_id === 31337 ? "Local chain" : `Chain ${config.chain_id}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.rpc_url] } },
  });
}
