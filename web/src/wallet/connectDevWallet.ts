import { createWalletClient, http } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import type { AppConfig } from "../appTypes";
import { chainOf } from "../chain/chainOf";
import type { ConnectedWallet } from "./ConnectedWallet";

/** The local stack's demo wallet: Hardhat's public development mnemonic, account 12 (docs/DESIGN.md). */
const DEV_MNEMONIC = "test test test test test test test test test test test junk";
const DEMO_WALLET_INDEX = 12;

/** Offered only on the local chain when the backend runs in development mode: its key is public knowledge. */
export function devWalletAvailable(config: AppConfig): boolean {
  return config.dev_mode && config.chain_id === 31337;
}

/** The development wallet, signing in the page (no extension needed). */
export function connectDevWallet(config: AppConfig): ConnectedWallet {
  if (!devWalletAvailable(config)) throw new Error("The development wallet exists only on the local chain.");
  const account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: DEMO_WALLET_INDEX });
  const rpcUrl = new URL(config.rpc_url, window.location.origin).toString();
  const client = createWalletClient({ account, chain: chainOf(config), transport: http(rpcUrl) });
  return { address: account.address, kind: "dev", client };
}
