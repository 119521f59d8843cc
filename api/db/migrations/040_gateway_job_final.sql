-- Finality (issue 25, docs/DESIGN.md "Finality"): a settled row is final once its settlement is CHAIN_FINALITY_DEPTH
-- blocks deep on the canonical chain; until then the sweeper re-checks it, and a row whose settlement (or lock) a
-- reorg removed goes back to `settling` and is settled again from its stored receipt.
ALTER TABLE gateway_job ADD COLUMN final boolean NOT NULL DEFAULT false;
-- Rows closed before this column existed are taken as final (their chain facts are long buried).
UPDATE gateway_job SET final = true WHERE status <> 'settled' OR completed_at < now() - interval '1 hour';
CREATE INDEX gateway_job_unfinal_idx ON gateway_job (job_id) WHERE status = 'settled' AND NOT final;
