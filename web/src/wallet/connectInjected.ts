import { createWalletClient, custom, numberToHex, type EIP1193Provider } from "viem";
import type { AppConfig } from "../appTypes";
import { chainOf } from "../chain/chainOf";
import type { ConnectedWallet } from "./ConnectedWallet";

declare global {
  interface Window {
    ethereum?: EIP1193Provider;
  }
}

export function hasInjectedWallet(): boolean {
  return typeof window !== "undefined" && window.ethereum !== undefined;
}

/** Connects the browser's EIP-1193 wallet (an extension) and makes sure it is on the app's chain. */
export async function connectInjected(config: AppConfig): Promise<ConnectedWallet> {
  const provider = window.ethereum;
  if (!provider) throw new Error("No browser wallet found. Install one, or use the development wallet locally.");
  const chain = chainOf(config);
  const [address] = await createWalletClient({ chain, transport: custom(provider) }).requestAddresses();
  if (!address) throw new Error("The wallet did not share an account.");
  const current = Number(await provider.request({ method: "eth_chainId" }));
  if (current !== config.chain_id) {
    try {
      await provider.request({
        method: "wallet_switchEthereumChain",
        params: [{ chainId: numberToHex(config.chain_id) }],
      });
    } catch {
      throw new Error(`Switch your wallet to chain ${config.chain_id} and connect again.`);
    }
  }
  const client = createWalletClient({ account: address, chain, transport: custom(provider) });
  return { address, kind: "injected", client };
}
