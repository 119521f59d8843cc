-- The reservation ledger (api/ledger/creditLedger.ts, docs/DESIGN.md "Reservation ledger"). A wallet's credits
-- as the index says them (Ponder's `account.credits_available`, already net of every indexed lock) minus
-- `reserved`: credits of locks queued or sent but not yet indexed. Shared by every gateway instance; a
-- reservation is one statement (INSERT … ON CONFLICT DO UPDATE … WHERE), so two gateways can never both spend
-- the same credits.
CREATE TABLE ledger_wallet (
  wallet text PRIMARY KEY,
  reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0)
);
-- One row per lock not yet seen by the index. Released (deleted, `reserved` lowered) when the index shows the
-- job (JobOpened), when the gateway sees the lock skipped (JobOpenSkipped) or never sent, or when it expires.
CREATE TABLE ledger_reservation (
  job_key text PRIMARY KEY,
  wallet text NOT NULL,
  credits bigint NOT NULL CHECK (credits > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_reservation_wallet_idx ON ledger_reservation (wallet);
CREATE INDEX ledger_reservation_created_idx ON ledger_reservation (created_at);
