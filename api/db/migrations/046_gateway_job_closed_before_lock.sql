-- A job closed without a charge while its lock was not yet on chain (the lifecycle's failJob found no job: issue 25,
-- a lock held up by a fee spike or a dropped transaction). Its client was answered with an error before the lock was
-- mined, so the webhook ingestion announces no job.submitted for the JobOpened that comes later
-- (api/webhooks/ingestChainEvents.ts, answeredBeforeLock). Told by the chain at close time, not by comparing the
-- gateway's clock with a block time of whole seconds.
ALTER TABLE gateway_job ADD COLUMN closed_before_lock boolean NOT NULL DEFAULT false;
