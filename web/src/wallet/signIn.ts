import { createSiweMessage } from "viem/siwe";
import { appApi } from "../appApi";
import type { AppSession } from "../appTypes";
import type { ConnectedWallet } from "./ConnectedWallet";

const SESSION_HOURS = 24;

/** Sign-In with Ethereum (EIP-4361): a nonce from the backend, one signature, a session cookie back. */
export async function signIn(wallet: ConnectedWallet, chainId: number): Promise<AppSession> {
  const { nonce } = await appApi.nonce();
  const now = new Date();
  const message = createSiweMessage({
    domain: window.location.host,
    uri: window.location.origin,
    address: wallet.address,
    chainId,
    nonce,
    version: "1",
    statement: "Sign in to manage your inference credits, API key and webhooks.",
    issuedAt: now,
    expirationTime: new Date(now.getTime() + SESSION_HOURS * 3_600_000),
  });
  const signature = await wallet.client.signMessage({ account: wallet.client.account, message });
  return appApi.login(message, signature);
}
