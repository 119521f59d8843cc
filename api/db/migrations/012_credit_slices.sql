-- Credits leased per gateway (api/ledger/creditLedger.ts, docs/DESIGN.md "Credit slices"). A gateway takes a slice
-- of a wallet's credits in one statement (counted in `ledger_wallet.reserved`, as a reservation is) and serves
-- reservations from memory until the slice is used or idle. `credits` is what the slice still holds: its unused
-- part plus its reservations whose lock the index does not show yet. The owner renews `expires_at` every sweep;
-- past it, any gateway deletes the slice and lowers `reserved` (a dead gateway's credits come back).
CREATE TABLE ledger_slice (
  slice_id   text PRIMARY KEY,
  wallet     text NOT NULL,
  owner      text NOT NULL,
  credits    bigint NOT NULL CHECK (credits >= 0),
  -- The unused part at the owner's last renewal: what a peer may be given back on request.
  free       bigint NOT NULL DEFAULT 0,
  renewed_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX ledger_slice_wallet_idx ON ledger_slice (wallet);
CREATE INDEX ledger_slice_expires_idx ON ledger_slice (expires_at);
-- Set by a gateway that cannot cover a request while peers' slices hold the wallet's credits: each owner gives the
-- unused part of its slice of that wallet back on its next sweep.
ALTER TABLE ledger_wallet ADD COLUMN wanted_at timestamptz;
