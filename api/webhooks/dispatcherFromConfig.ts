import { readFileSync } from "node:fs";
import type pg from "pg";
import type { GatewayConfig } from "../config.js";
import { ponderIndexReader } from "./chainEventFeed.js";
import { indexNotifyChannel, type DispatcherDeps, type DispatcherLogger } from "./startDispatcher.js";
import type { TargetPolicy } from "./targetPolicy.js";

/** The WEBHOOK_* settings the webhooks module reads (a subset of GatewayConfig). */
export type WebhookConfig = Pick<
  GatewayConfig,
  | "INDEXER_URL"
  | "CHAIN_FINALITY_DEPTH"
  | "WEBHOOK_ALLOW_HTTP_LOOPBACK"
  | "WEBHOOK_ALLOW_PRIVATE_TARGETS"
  | "WEBHOOK_RETRY_SCHEDULE_MS"
  | "WEBHOOK_TIMEOUT_MS"
  | "WEBHOOK_CA_FILE"
> &
  // The gateway's config has it (in-process dispatcher); the dispatcher process polls.
  Partial<Pick<GatewayConfig, "INDEX_DB_SCHEMA">>;

export function targetPolicyFrom(
  config: Pick<WebhookConfig, "WEBHOOK_ALLOW_HTTP_LOOPBACK" | "WEBHOOK_ALLOW_PRIVATE_TARGETS">,
): TargetPolicy {
  return {
    allowHttpLoopback: config.WEBHOOK_ALLOW_HTTP_LOOPBACK,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  };
}

/** Dispatcher deps from the gateway's configuration; `extra.index` is the gateway's own index client when in process. */
export function dispatcherDepsFrom(
  config: WebhookConfig,
  pool: pg.Pool,
  extra: Partial<Omit<DispatcherDeps, "pool">> & { logger?: DispatcherLogger } = {},
): DispatcherDeps {
  return {
    pool,
    index: extra.index ?? ponderIndexReader(config.INDEXER_URL, { finalityDepth: config.CHAIN_FINALITY_DEPTH }),
    policy: targetPolicyFrom(config),
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    ...(config.WEBHOOK_CA_FILE ? { extraCa: readFileSync(config.WEBHOOK_CA_FILE, "utf8") } : {}),
    // Ingestion wakes on each indexed block instead of polling the index every 100 ms.
    ...(config.INDEX_DB_SCHEMA ? { indexChannel: indexNotifyChannel(config.INDEX_DB_SCHEMA) } : {}),
    ...extra,
  };
}
