import type { Request } from "express";
import type pg from "pg";
import { ApiError } from "../errors/ApiError.js";
import { sessionTokenOf } from "./sessionCookie.js";
import { findSession } from "./sessionStore.js";

/** The signed-in wallet of a web-app request, or null when there is none. */
export type ResolveWallet = (req: Request) => Promise<string | null>;

/** What the web app's session-bound endpoints use. */
export interface SessionDeps {
  pool: pg.Pool;
  resolveWallet: ResolveWallet;
}

/** The session lookup: a live session (cookie) on the deployment's chain names the wallet. */
export function sessionWalletResolver(pool: pg.Pool, chainId: number): ResolveWallet {
  return async (req) => {
    const token = sessionTokenOf(req);
    if (!token) return null;
    const session = await findSession(pool, token);
    return session && session.chainId === chainId ? session.wallet : null;
  };
}

/** The signed-in wallet; without a session 401 `app_session_required`. */
export async function sessionWallet(deps: Pick<SessionDeps, "resolveWallet">, req: Request): Promise<string> {
  const wallet = await deps.resolveWallet(req);
  if (!wallet) throw new ApiError("app_session_required");
  return wallet;
}
