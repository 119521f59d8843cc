-- Off-chain progress of every job this gateway opened. The chain (via the index) is the word on outcomes;
-- this table holds what the chain never sees (processing, settling, the worker's receipt awaiting settlement)
-- and what recovery needs after a crash. `job.processing` webhook facts are read from here (processing_at).
CREATE TABLE gateway_job (
  job_id            text PRIMARY KEY,              -- job_<ULID>
  job_key           text NOT NULL UNIQUE,          -- bytes32 on chain, 0x-hex
  wallet            text NOT NULL,                 -- lowercase 0x address
  key_hash          text NOT NULL,                 -- lowercase 0x bytes32
  model             text NOT NULL,
  tier              text NOT NULL,
  -- pending | processing | settling | settled | failed | refunded | disputed
  status            text NOT NULL,
  stream            boolean NOT NULL,
  max_tokens        integer NOT NULL,
  credits_locked    bigint NOT NULL,
  prompt_tokens     integer,
  completion_tokens integer,
  credits_charged   bigint,
  worker            text,                          -- lowercase 0x address of the worker that acknowledged
  escrow_tx         text,
  deadline          bigint,                        -- chain deadline, unix seconds
  processing_at     timestamptz,                   -- when a worker acknowledged (job.processing)
  receipt           jsonb,                         -- verified receipt awaiting or past settlement
  signature         text,
  output_hash       text,
  final_token_at    bigint,
  settlement_tx     text,
  settlement_block  bigint,
  fail_tx           text,
  refund_tx         text,
  timed_out         boolean NOT NULL DEFAULT false, -- failed/refunded because no worker completed in time
  error             text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz
);

CREATE INDEX gateway_job_key_idx ON gateway_job (key_hash, job_id DESC);
CREATE INDEX gateway_job_open_idx ON gateway_job (status) WHERE status IN ('pending', 'processing', 'settling');
CREATE INDEX gateway_job_processing_idx ON gateway_job (processing_at) WHERE processing_at IS NOT NULL;
