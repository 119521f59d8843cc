-- Webhooks, their events, deliveries and attempts (api/webhooks). Owned by the webhooks module: 100-199.

-- A webhook belongs to a WALLET, not to a key: during beta a wallet has one key, and a rotated key keeps
-- the wallet's webhooks.
CREATE TABLE webhook (
  id text PRIMARY KEY,                       -- wh_<ULID>
  wallet text NOT NULL,                      -- lowercase 0x address
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,                      -- signing secret; never returned after creation
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'failed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  failed_at timestamptz,
  deleted_at timestamptz
);
CREATE INDEX webhook_wallet_idx ON webhook (wallet, created_at) WHERE deleted_at IS NULL;

-- One row per fact. `body` is the exact JSON that is signed and sent, so every attempt and every replay
-- sends the same bytes; `id` is derived from the fact (chain position or job id), never random.
CREATE TABLE webhook_event (
  id text PRIMARY KEY,                       -- evt_<hex>
  event text NOT NULL,
  wallet text,                               -- null: worker-wide event, goes to every subscriber
  created_at timestamptz NOT NULL,
  source text NOT NULL,                      -- chain event id, or job id for job.processing
  body text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

-- One row per (webhook, event). pending -> delivered | failed; held = not attempted because the webhook
-- was failed (listed with the failed deliveries, replayable).
CREATE TABLE webhook_delivery (
  id bigserial PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhook (id),
  event_id text NOT NULL REFERENCES webhook_event (id),
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'held')),
  -- attempts of the current series (reset by a replay); attempt numbers in webhook_attempt keep counting
  series_attempts integer NOT NULL DEFAULT 0,
  total_attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  failed_at timestamptz,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_delivery_webhook_idx ON webhook_delivery (webhook_id, status);

CREATE TABLE webhook_attempt (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_delivery (id),
  attempt_number integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  response_snippet text,
  error text,
  ok boolean NOT NULL,
  UNIQUE (delivery_id, attempt_number)
);

-- Durable position of the dispatcher in the index's chain_event log.
CREATE TABLE webhook_cursor (
  name text PRIMARY KEY,
  position text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Settings of a wallet (web app Settings view).
CREATE TABLE wallet_settings (
  wallet text PRIMARY KEY,
  low_credit_threshold integer NOT NULL DEFAULT 100 CHECK (low_credit_threshold >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Whether a wallet's balance is below its threshold, as of the last balance-changing chain event: credit.low
-- fires on the move from not-below to below, and is re-armed when the balance is back at or above.
CREATE TABLE credit_low_state (
  wallet text PRIMARY KEY,
  below boolean NOT NULL,
  balance bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
