import type { Address, Hex } from "viem";
import { LOCAL_ACCOUNT_INDEX, localAccount, localPrivateKey } from "@credit-metered/client/local";

/**
 * Local signer of gateway `i` when several gateway processes share one chain (docs/DESIGN.md, "Several gateways"):
 * gateway 0 is the usual local gateway account (index 1); gateway i ≥ 1 takes mnemonic index 19 + i, past the 20
 * accounts `hardhat node` pre-funds and every other local role, so the deploy funds it with ETH itself.
 */
export const EXTRA_GATEWAY_FIRST_INDEX = 20;
/** At most this many gateways in a local stack (indices 20–27 are reserved for them). */
export const MAX_LOCAL_GATEWAYS = 9;

export function localGatewayIndex(i: number): number {
  if (!Number.isInteger(i) || i < 0 || i >= MAX_LOCAL_GATEWAYS) throw new Error(`no local gateway ${i}`);
  return i === 0 ? LOCAL_ACCOUNT_INDEX.gateway : EXTRA_GATEWAY_FIRST_INDEX + i - 1;
}

export function localGatewayPrivateKey(i: number): Hex {
  return localPrivateKey(localGatewayIndex(i));
}

export function localGatewayAddress(i: number): Address {
  return localAccount(localGatewayIndex(i)).address;
}

/** The addresses of local gateways 1 … count-1 (gateway 0 is the deployment's `gateway` role holder). */
export function extraLocalGatewayAddresses(count: number): Address[] {
  return Array.from({ length: Math.max(0, count - 1) }, (_, i) => localGatewayAddress(i + 1));
}
