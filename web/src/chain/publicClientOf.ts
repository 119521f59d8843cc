import { createPublicClient, http, type PublicClient } from "viem";
import type { AppConfig } from "../appTypes";
import { chainOf } from "./chainOf";

const cache = new Map<string, PublicClient>();

/** A read-only client on the app's chain (its RPC URL from /app/config). */
export function publicClientOf(config: AppConfig): PublicClient {
  const rpcUrl = new URL(config.rpc_url, window.location.origin).toString();
  let client = cache.get(rpcUrl);
  if (!client) {
    client = createPublicClient({ chain: chainOf(config), transport: http(rpcUrl), pollingInterval: 500 });
    cache.set(rpcUrl, client);
  }
  return client;
}
