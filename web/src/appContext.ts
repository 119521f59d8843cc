import { createContext, useContext } from "react";
import type { PublicClient } from "viem";
import type { AppConfig, AppSession } from "./appTypes";
import type { ConnectedWallet } from "./wallet/ConnectedWallet";

export interface AppState {
  config: AppConfig;
  publicClient: PublicClient;
  wallet: ConnectedWallet | null;
  session: AppSession | null;
  setWallet: (wallet: ConnectedWallet | null) => void;
  setSession: (session: AppSession | null) => void;
  /** Bumped after anything that changes balances, so views reload. */
  refreshKey: number;
  refresh: () => void;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error("useApp outside <AppContext>");
  return state;
}
