import type { Request } from "express";
import { createPublicClient, getAddress, http, type Address, type PublicClient } from "viem";
import { MIN_DEPOSIT, type Deployment } from "@credit-metered/client";
import type { GatewayConfig } from "../config.js";
import { sessionWallet, type ResolveWallet } from "./sessionWallet.js";

/** The chain the local stack runs (Hardhat); dev-mode helpers exist only there. */
export const LOCAL_CHAIN_ID = 31337;
/**
 * The Fund page preselects the smallest funding (spec, Limits: "the equivalent of 1 in stablecoin units (suggested
 * start amount in the web application)"), i.e. the escrow's MIN_DEPOSIT: 1 USDG, 100 credits.
 */
export const SUGGESTED_DEPOSIT_USDG = Number(MIN_DEPOSIT) / 1_000_000;
/** The Activity page shows at most this many days. */
export const MAX_ACTIVITY_DAYS = 90;

/** Development mode (APP_DEV_MODE) counts only on the local chain: the demo wallet and the faucet. */
export function devModeOf(deps: { config: Pick<GatewayConfig, "APP_DEV_MODE">; deployment: Deployment }): boolean {
  return deps.config.APP_DEV_MODE && deps.deployment.chainId === LOCAL_CHAIN_ID;
}

/** A public client on the deployment's chain, for the web app's reads and signature checks. */
export function appPublicClient(config: Pick<GatewayConfig, "RPC_URL">, deployment: Deployment): PublicClient {
  const chain = {
    id: deployment.chainId,
    name: `chain ${deployment.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.RPC_URL] } },
  } as const;
  return createPublicClient({ chain, transport: http(config.RPC_URL), pollingInterval: 250 });
}

/**
 * Where the app is served, from configuration only: APP_URL, else the gateway's own public origin
 * (PUBLIC_BASE_URL, by default `http://API_HOST:API_PORT`; the local stack sets APP_URL to the origin it prints).
 * Never from the request's `Host` or forwarding headers: a sign-in message made for another site must not be
 * redeemable here, and no header may choose the links this app hands out (issue 23 items 3 and 9).
 */
export function appOriginOf(config: Pick<GatewayConfig, "APP_URL" | "PUBLIC_BASE_URL">): {
  domain: string;
  origin: string;
} {
  const url = new URL(config.APP_URL ?? config.PUBLIC_BASE_URL);
  return { domain: url.host, origin: url.origin };
}

/** The signed-in wallet, checksummed; without a session 401 `app_session_required`. */
export async function signedInAddress(deps: { resolveWallet: ResolveWallet }, req: Request): Promise<Address> {
  return getAddress(await sessionWallet(deps, req));
}
