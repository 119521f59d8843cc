-- Idempotency-Key records: the first response to a (key, Idempotency-Key) pair, replayed on retries.
CREATE TABLE idempotency_record (
  key_hash        text NOT NULL,
  idempotency_key text NOT NULL,
  body_hash       text NOT NULL,
  -- in_progress | done
  state           text NOT NULL,
  job_id          text,
  response_status integer,
  response_headers jsonb,
  response_body   jsonb,
  stream          boolean NOT NULL DEFAULT false,
  include_usage   boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key_hash, idempotency_key)
);
CREATE INDEX idempotency_record_created_idx ON idempotency_record (created_at);
