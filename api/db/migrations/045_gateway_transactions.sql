-- The gateway signer's transactions from signing until final (api/chain/transactionStore.ts, docs/DESIGN.md "A
-- chain that misbehaves"). A row is written before its bytes leave for any node (write-ahead), rewritten when a
-- replacement is signed, and deleted once the transaction is final; a restarted gateway reloads its signer's rows,
-- broadcasts again what the node lost and resumes replacing what is stuck.
CREATE TABLE gateway_transaction (
  chain_id                  integer NOT NULL,
  signer                    text NOT NULL,        -- lowercase 0x address of the signing key
  nonce                     bigint NOT NULL,
  -- The call it makes (the contract function, e.g. `openJobBatch`); `filler` marks a no-op holding the nonce.
  purpose                   text NOT NULL,
  filler                    boolean NOT NULL DEFAULT false,
  -- The version broadcast now: its signed bytes (the call, gas and fees are read back from them) and fees.
  raw                       bytea NOT NULL,
  max_fee_per_gas           numeric(78) NOT NULL,
  max_priority_fee_per_gas  numeric(78) NOT NULL,
  -- Every version signed at this nonce, oldest first (any of them may be the one mined).
  hashes                    text[] NOT NULL,
  sent_at                   timestamptz NOT NULL,
  replaced_at               timestamptz,
  PRIMARY KEY (chain_id, signer, nonce)
);
