import type pg from "pg";
import { getAddress, isHex, type Address, type Hex, type PublicClient } from "viem";
import { parseSiweMessage, validateSiweMessage } from "viem/siwe";
import { ApiError } from "../errors/ApiError.js";
import { consumeNonce } from "./nonceStore.js";

export interface SignInExpectations {
  /** RFC 3986 authority the app is served from (`host:port`). */
  domain: string;
  /** The app's origin; the message's `uri` must be on it. */
  origin: string;
  chainId: number;
}

const failed = (message: string) => new ApiError("app_sign_in_failed", { message });

/**
 * Checks an EIP-4361 sign-in: the message's domain, uri and chain are this app's, it is current, its nonce was
 * issued here and is consumed now (single use), and the signature is the address's (EOA or ERC-1271 wallet).
 * Returns the signed-in address.
 */
export async function verifySignIn(
  deps: { pool: pg.Pool; publicClient: PublicClient },
  input: { message: string; signature: string },
  expected: SignInExpectations,
): Promise<Address> {
  const fields = parseSiweMessage(input.message);
  if (!fields.address || !fields.nonce || !fields.uri || fields.version !== "1") {
    throw failed("The sign-in message is not an EIP-4361 message.");
  }
  if (fields.domain !== expected.domain) throw failed(`The sign-in message is for ${fields.domain}, not this site.`);
  let uriOrigin: string;
  try {
    uriOrigin = new URL(fields.uri).origin;
  } catch {
    throw failed("The sign-in message's URI is malformed.");
  }
  if (uriOrigin !== expected.origin) throw failed("The sign-in message's URI is not this site.");
  if (fields.chainId !== expected.chainId) {
    throw failed(`The sign-in message is for chain ${fields.chainId}; this app runs on chain ${expected.chainId}.`);
  }
  if (!validateSiweMessage({ message: fields, domain: expected.domain })) {
    throw failed("The sign-in message has expired or is not valid yet.");
  }
  if (!isHex(input.signature)) throw failed("The signature is not hex.");
  const address = getAddress(fields.address);
  const valid = await deps.publicClient.verifyMessage({
    address,
    message: input.message,
    signature: input.signature as Hex,
  });
  if (!valid) throw failed("The signature does not match the address in the message.");
  // Consumed last, so a bad signature does not burn the nonce of an honest sign-in in flight.
  if (!(await consumeNonce(deps.pool, fields.nonce))) {
    throw failed("The sign-in nonce is unknown, expired or used already. Sign in again.");
  }
  return address;
}
