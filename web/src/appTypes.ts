// Shapes of the backend's /app/* answers (api/app, api/webhooks/appWebhooksRouter.ts).
import type { Address, Hex } from "viem";

export interface AppConfig {
  chain_id: number;
  rpc_url: string;
  contracts: {
    stablecoin: Address;
    stakeToken: Address;
    apiKeyRegistry: Address;
    modelCatalog: Address;
    workerRegistry: Address;
    creditEscrow: Address;
    disputeManager: Address;
  };
  models: { id: string; key: Hex }[];
  treasury: Address;
  fee_bps: number;
  dispute_window_s: number;
  dev_mode: boolean;
  api_url: string;
  explorer_url: string;
  min_deposit_usdg: number;
  suggested_deposit_usdg: number;
  credits_per_usdg: number;
}

export interface AppSession {
  wallet: string;
  expires_at: string;
}

export type KeyStatus = "none" | "active" | "revoked" | "suspended";

export interface AppAccount {
  wallet: string;
  credits_available: number;
  usdg_value: number;
  credits_locked: number;
  locked_usdg_value: number;
  last_topup_at: string | null;
  key: { status: KeyStatus; key_hash: Hex | null; created_at: string | null };
}

export interface WalletJob {
  id: string;
  job_key: Hex;
  status: string;
  model: string;
  tier: string;
  credits_locked: number;
  credits_charged: number | null;
  credits_refunded: number | null;
  usdg_value: number;
  worker_address: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  proof_hash: Hex | null;
  created_at: string;
  completed_at: string | null;
  escrow_tx: Hex;
  settlement_tx: Hex | null;
  refund_tx: Hex | null;
  fail_tx: Hex | null;
  dispute_tx: Hex | null;
  dispute_outcome: string | null;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  created_at: string;
  status: "active" | "failed";
}

export interface DeliveryAttempt {
  attempt_number: number;
  started_at: string;
  duration_ms: number | null;
  status_code: number | null;
  response_snippet: string | null;
  error: string | null;
  ok: boolean;
}

export interface FailedDelivery {
  id: string;
  webhook_id: string;
  url: string;
  status: "failed" | "held";
  event: { id: string; event: string; created_at: string; data: Record<string, unknown> };
  created_at: string;
  failed_at: string | null;
  attempts: DeliveryAttempt[];
}

/** One page of `GET /app/jobs` (paged and filtered like `GET /v1/jobs`). */
export interface WalletJobPage {
  object: "list";
  data: WalletJob[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface WalletJobFilter {
  limit: number;
  before?: string;
  after?: string;
  status?: string;
  model?: string;
}

/** `GET /app/activity`: the wallet's charges, tokens, outcomes and waiting times per UTC day. */
export interface WalletActivity {
  object: "activity";
  wallet: string;
  days: number;
  from: string;
  to: string;
  totals: { jobs: number; credits_charged: number; prompt_tokens: number; completion_tokens: number };
  by_day: {
    date: string;
    jobs: number;
    credits_charged: number;
    prompt_tokens: number;
    completion_tokens: number;
    credits_by_model: Record<string, number>;
  }[];
  by_model: {
    model: string;
    jobs: number;
    credits_charged: number;
    prompt_tokens: number;
    completion_tokens: number;
  }[];
  by_outcome: { status: string; jobs: number }[];
  time_to_first_token: { date: string; jobs: number; p50_ms: number; p95_ms: number }[];
}

/** A Model resource of `GET /v1/models` (served to the app as `GET /app/models`). */
export interface ServiceModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  service: {
    tier: string;
    credits_per_request: number;
    credits_per_1k_tokens: number;
    active_workers: number;
    median_latency_ms: number;
    parameters: string;
    context_window: number;
    stats_window_hours: number;
    jobs_observed: number;
    p95_time_to_first_token_ms: number | null;
    success_rate: number | null;
    disputes_opened: number;
    disputes_upheld: number;
  };
}
