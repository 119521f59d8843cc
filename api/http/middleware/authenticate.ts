import type { RequestHandler, Response } from "express";
import type { Hex } from "viem";
import { API_KEY_PATTERN, keyHashOf, type IssuedKeyStatus as KeyStatus } from "@credit-metered/client";
import { ApiError } from "../../errors/ApiError.js";

export interface KeyRecord {
  wallet: Hex;
  status: KeyStatus;
}

/** Resolves a key hash to its wallet and status (the index, with the chain as the word on revocation). */
export interface KeyDirectory {
  lookup(keyHash: Hex): Promise<KeyRecord | null>;
}

export interface AuthContext {
  wallet: Hex;
  keyHash: Hex;
}

/** The authenticated caller; only valid on routes behind `authenticate`. */
export function authOf(res: Response): AuthContext {
  const auth = res.locals["auth"] as AuthContext | undefined;
  if (!auth) throw new Error("authOf() used on a route without authenticate()");
  return auth;
}

export function authenticate(keys: KeyDirectory): RequestHandler {
  return async (req, res, next) => {
    // Already authenticated by a more specific mount (the completion path's index-backed check).
    if (res.locals["auth"]) return next();
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === "") throw new ApiError("missing_api_key");
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) throw new ApiError("invalid_api_key");
    const keyHash = keyHashOf(key);
    const record = await keys.lookup(keyHash);
    if (!record || record.status === "revoked") throw new ApiError("invalid_api_key");
    if (record.status === "suspended") throw new ApiError("key_suspended");
    res.locals["auth"] = { wallet: record.wallet, keyHash } satisfies AuthContext;
    next();
  };
}
