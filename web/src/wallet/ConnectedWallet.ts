import type { Account, Address, Chain, Transport, WalletClient } from "viem";

/** A wallet the app can ask for signatures and transactions. */
export interface ConnectedWallet {
  address: Address;
  kind: "injected" | "dev";
  client: WalletClient<Transport, Chain, Account>;
}
