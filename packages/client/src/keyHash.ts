import { type Address, type Hex, encodeAbiParameters, keccak256, stringToBytes } from "viem";

/** API keys: `svc_live_` + 32 alphanumerics. */
export const API_KEY_PREFIX = "svc_live_";
export const API_KEY_RANDOM_LENGTH = 32;
/** The characters of a key's random part. */
export const API_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** A well-formed API key (spec, Authentication). */
export const API_KEY_PATTERN = /^svc_live_[A-Za-z0-9]{32}$/;

/** Whether `value` has the API key format (it may still be unknown or revoked). */
export function isApiKeyFormat(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/**
 * A new API key from the platform's cryptographic randomness (Web Crypto: browsers and Node alike). Bytes at or
 * above the largest multiple of the alphabet's size are drawn again, so every character is uniform. In the web app
 * the key never leaves the page except to the user.
 */
export function generateApiKey(): string {
  const limit = 256 - (256 % API_KEY_ALPHABET.length);
  let random = "";
  while (random.length < API_KEY_RANDOM_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(API_KEY_RANDOM_LENGTH))) {
      if (byte < limit && random.length < API_KEY_RANDOM_LENGTH)
        random += API_KEY_ALPHABET[byte % API_KEY_ALPHABET.length];
    }
  }
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

/**
 * What a wallet commits to before registering `keyHash` (ApiKeyRegistry.commitKey): keccak256(abi.encode(wallet,
 * keyHash)). The registration must land in a later block than the commitment; the earliest commitment to a hash
 * wins it, so nobody can block a registration by copying its hash (docs/DESIGN.md, "Key registration").
 */
export function keyCommitmentOf(wallet: Address, keyHash: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [wallet, keyHash]));
}
