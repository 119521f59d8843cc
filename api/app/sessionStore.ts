import { createHash, randomBytes } from "node:crypto";
import type pg from "pg";

export interface AppSession {
  wallet: string;
  chainId: number;
  expiresAt: Date;
}

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

/** Opens a session for `wallet`; returns the token for the cookie (only its hash is stored). */
export async function createSession(
  pool: pg.Pool,
  session: { wallet: string; chainId: number; ttlSeconds: number },
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const { rows } = await pool.query<{ expires_at: Date }>(
    `INSERT INTO app_session (token_hash, wallet, chain_id, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [hashOf(token), session.wallet.toLowerCase(), session.chainId, session.ttlSeconds],
  );
  return { token, expiresAt: rows[0]!.expires_at };
}

/** The live session of `token`, or undefined when unknown, ended or expired. */
export async function findSession(pool: pg.Pool, token: string): Promise<AppSession | undefined> {
  const { rows } = await pool.query<{ wallet: string; chain_id: number; expires_at: Date }>(
    "SELECT wallet, chain_id, expires_at FROM app_session WHERE token_hash = $1 AND ended_at IS NULL AND expires_at > now()",
    [hashOf(token)],
  );
  const row = rows[0];
  return row ? { wallet: row.wallet, chainId: row.chain_id, expiresAt: row.expires_at } : undefined;
}

/** Ends the session of `token` (logout). */
export async function endSession(pool: pg.Pool, token: string): Promise<void> {
  await pool.query("UPDATE app_session SET ended_at = now() WHERE token_hash = $1 AND ended_at IS NULL", [
    hashOf(token),
  ]);
}
