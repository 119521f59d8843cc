import type pg from "pg";
import { generateSiweNonce } from "viem/siwe";

/** Issues a fresh SIWE nonce valid for `ttlSeconds`. */
export async function issueNonce(pool: pg.Pool, ttlSeconds: number): Promise<{ nonce: string; expiresAt: Date }> {
  const nonce = generateSiweNonce();
  const { rows } = await pool.query<{ expires_at: Date }>(
    "INSERT INTO app_siwe_nonce (nonce, expires_at) VALUES ($1, now() + make_interval(secs => $2)) RETURNING expires_at",
    [nonce, ttlSeconds],
  );
  // Expired nonces are of no use to anyone; drop them as we go.
  await pool.query("DELETE FROM app_siwe_nonce WHERE expires_at < now() - interval '1 hour'");
  return { nonce, expiresAt: rows[0]!.expires_at };
}

/**
 * Marks `nonce` used. True only for the one caller that consumes an issued, unexpired, unused nonce: a replayed
 * sign-in message fails here.
 */
export async function consumeNonce(pool: pg.Pool, nonce: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    "UPDATE app_siwe_nonce SET used_at = now() WHERE nonce = $1 AND used_at IS NULL AND expires_at > now()",
    [nonce],
  );
  return rowCount === 1;
}
