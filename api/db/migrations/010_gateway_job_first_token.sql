-- Time to first token of each job, for the trust figures of GET /v1/models (p95 over a window) and the web app's
-- activity charts. Milliseconds from the request's acceptance (escrow lock included) to the first token relayed:
-- what the client waited. Null when no token was ever relayed.
ALTER TABLE gateway_job ADD COLUMN first_token_ms integer;
-- The trust figures and the activity charts read the jobs of a time window.
CREATE INDEX gateway_job_created_idx ON gateway_job (created_at);
CREATE INDEX gateway_job_wallet_created_idx ON gateway_job (wallet, created_at);
