// Shapes of the backend's /app/* answers (api/endpoints/app/). The answers the gateway
// declares in its HTTP contract (@credit-metered/client/http) are imported from there, types only (nothing of the server
// is bundled).
import type { KeyStatus, ProductContracts } from "@credit-metered/client";
import type { Address, Hex } from "viem";
export type {
  Model as ServiceModel,
  WalletActivity,
  WalletJob,
  WalletJobPage,
  WebhookView as Webhook,
} from "@credit-metered/client/http";

export interface AppConfig {
  chain_id: number;
  rpc_url: string;
  contracts: ProductContracts;
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

export interface AppAccount {
  wallet: string;
  credits_available: number;
  usdg_value: number;
  credits_locked: number;
  locked_usdg_value: number;
  last_topup_at: string | null;
  key: { status: KeyStatus; key_hash: Hex | null; created_at: string | null };
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

export interface WalletJobFilter {
  limit: number;
  before?: string;
  after?: string;
  status?: string;
  model?: string;
}
