// The local stack's accounts, from Hardhat's public development mnemonic: for local tooling and tests only, never
// imported by the browser-safe entry.
import { type HDAccount, type Hex, bytesToHex } from "viem";
import { mnemonicToAccount } from "viem/accounts";

/** Hardhat's default development mnemonic: its accounts are funded with ETH on `hardhat node`. Never use it elsewhere. */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";

/** Account indices of the local stack's roles (docs/DESIGN.md, "Local accounts"). */
export const LOCAL_ACCOUNT_INDEX = {
  admin: 0,
  gateway: 1,
  arbiter: 2,
  operator: 2,
  treasury: 3,
  firstWorker: 4,
  demoWallet: 12,
} as const;
/** Operator-run workers of the local stack: indices 4 to 11. */
export const LOCAL_WORKER_COUNT = 8;

/** The local account at `index` of the Hardhat mnemonic. */
export function localAccount(index: number): HDAccount {
  return mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: index });
}

/** The private key of the local account at `index` (for processes configured by environment). */
export function localPrivateKey(index: number): Hex {
  const key = localAccount(index).getHdKey().privateKey;
  if (!key) throw new Error(`no private key for local account ${index}`);
  return bytesToHex(key);
}

/** The worker accounts (indices 4-11). */
export function localWorkerAccounts(): HDAccount[] {
  return Array.from({ length: LOCAL_WORKER_COUNT }, (_, i) => localAccount(LOCAL_ACCOUNT_INDEX.firstWorker + i));
}

export interface LocalAccounts {
  admin: HDAccount;
  gateway: HDAccount;
  arbiter: HDAccount;
  operator: HDAccount;
  treasury: HDAccount;
  workers: HDAccount[];
  demoWallet: HDAccount;
}

/** Every local role's account. */
export function localAccounts(): LocalAccounts {
  return {
    admin: localAccount(LOCAL_ACCOUNT_INDEX.admin),
    gateway: localAccount(LOCAL_ACCOUNT_INDEX.gateway),
    arbiter: localAccount(LOCAL_ACCOUNT_INDEX.arbiter),
    operator: localAccount(LOCAL_ACCOUNT_INDEX.operator),
    treasury: localAccount(LOCAL_ACCOUNT_INDEX.treasury),
    workers: localWorkerAccounts(),
    demoWallet: localAccount(LOCAL_ACCOUNT_INDEX.demoWallet),
  };
}
