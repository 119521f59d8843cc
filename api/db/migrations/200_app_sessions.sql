-- Web application sign-in (api/app): SIWE nonces and sessions. Owned by the web app backend: 200-299.

-- A nonce is handed out before sign-in and consumed by exactly one login (used_at), within its expiry.
CREATE TABLE app_siwe_nonce (
  nonce text PRIMARY KEY,
  issued_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX app_siwe_nonce_expiry_idx ON app_siwe_nonce (expires_at);

-- A signed-in browser. Only the sha256 of the cookie's token is stored, so a database read cannot be replayed
-- as a cookie.
CREATE TABLE app_session (
  token_hash text PRIMARY KEY,
  wallet text NOT NULL,                      -- lowercase 0x address
  chain_id integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX app_session_wallet_idx ON app_session (wallet);
