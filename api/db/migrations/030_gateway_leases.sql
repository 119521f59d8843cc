-- Several gateway processes share one database (docs/DESIGN.md, "Several gateways"). Each job row names the gateway
-- that runs it; each gateway renews a lease. A live gateway that finds a lease expired takes over that gateway's
-- unfinished jobs (api/jobs/gatewayLeases.ts) by moving `gateway_id` to itself in one statement, so of several live
-- gateways exactly one takes each job.
--
-- The owner is filled in by the database from the connection's `app.gateway_id` setting (api/db/createPool.ts), so
-- no insert has to name it. Rows without an owner (written before this migration, or by a process without a gateway
-- id) are swept by any gateway, as before.
ALTER TABLE gateway_job
  ADD COLUMN gateway_id text DEFAULT NULLIF(current_setting('app.gateway_id', true), '');

CREATE INDEX gateway_job_owner_open_idx ON gateway_job (gateway_id)
  WHERE status IN ('pending', 'processing', 'settling');

CREATE TABLE gateway_lease (
  gateway_id    text PRIMARY KEY,
  signer        text NOT NULL,                -- lowercase 0x address of the gateway's GATEWAY_ROLE key
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  -- Renewed every heartbeat; past it, the gateway counts as dead and its open jobs may be taken over.
  expires_at    timestamptz NOT NULL,
  -- Set when a graceful shutdown hands the jobs over at once instead of waiting for the expiry.
  released_at   timestamptz
);
