import { keccak256, stringToBytes, type Hex, type PublicClient } from "viem";
import type { AppConfig } from "../appTypes";
import type { ConnectedWallet } from "../wallet/ConnectedWallet";
import { apiKeyRegistryAbi } from "./contracts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const KEY_RANDOM_LENGTH = 32;

/**
 * A new `svc_live_` key from the browser's cryptographic randomness. Bytes at or above the largest multiple of 62
 * are drawn again, so every character is uniform. The key never leaves this page except to the user.
 */
export function generateApiKey(): string {
  const limit = 256 - (256 % ALPHABET.length);
  let out = "";
  while (out.length < KEY_RANDOM_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(KEY_RANDOM_LENGTH))) {
      if (byte < limit && out.length < KEY_RANDOM_LENGTH) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return `svc_live_${out}`;
}

/** What the registry stores: keccak256 of the key's UTF-8 text. */
export function keyHashOf(apiKey: string): Hex {
  return keccak256(stringToBytes(apiKey));
}

async function send(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  call: { functionName: "registerKey" | "rotateKey"; args: [Hex] } | { functionName: "revokeKey"; args: [] },
): Promise<Hex> {
  const hash = await wallet.client.writeContract({
    account: wallet.client.account,
    chain: wallet.client.chain,
    address: config.contracts.apiKeyRegistry,
    abi: apiKeyRegistryAbi,
    ...call,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error("The key transaction was reverted by the chain.");
  return hash;
}

/** Registers a new key's hash; with an active key already, rotates to it (the old key stops working). */
export function registerOrRotateKey(
  config: AppConfig,
  publicClient: PublicClient,
  wallet: ConnectedWallet,
  keyHash: Hex,
  hasActiveKey: boolean,
): Promise<Hex> {
  return send(config, publicClient, wallet, {
    functionName: hasActiveKey ? "rotateKey" : "registerKey",
    args: [keyHash],
  });
}

/** Revokes the wallet's active key. */
export function revokeKey(config: AppConfig, publicClient: PublicClient, wallet: ConnectedWallet): Promise<Hex> {
  return send(config, publicClient, wallet, { functionName: "revokeKey", args: [] });
}
