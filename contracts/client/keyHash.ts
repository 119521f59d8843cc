import { randomInt } from "node:crypto";
import { type Hex, keccak256, stringToBytes } from "viem";

/** API keys: `svc_live_` + 32 alphanumerics. */
export const API_KEY_PREFIX = "svc_live_";
export const API_KEY_RANDOM_LENGTH = 32;
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const API_KEY_PATTERN = /^svc_live_[A-Za-z0-9]{32}$/;

/** Whether `value` has the API key format (it may still be unknown or revoked). */
export function isApiKeyFormat(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** A new API key from the OS's cryptographic randomness (uniform over the alphabet: `randomInt` rejects bias). */
export function generateApiKey(): string {
  let random = "";
  for (let i = 0; i < API_KEY_RANDOM_LENGTH; i++) random += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return `${API_KEY_PREFIX}${random}`;
}

/** What the key registry stores: keccak256 of the key's UTF-8 text. */
export function keyHashOf(apiKey: string): Hex {
  return keccak256(stringToBytes(apiKey));
}

/** The catalog's key of a model: keccak256 of the model id's UTF-8 text. */
export function modelKeyOf(modelId: string): Hex {
  return keccak256(stringToBytes(modelId));
}
