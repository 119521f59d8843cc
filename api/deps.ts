import type { Logger } from "pino";
import type pg from "pg";
import type { PublicClient } from "viem";
import type { Deployment } from "@credit-metered/client";
import type { EscrowChain } from "./chain/escrowChain.js";
import type { ResolveWallet } from "./app/sessionWallet.js";
import type { WalletActivity } from "./app/walletActivity.js";
import type { WalletJobs } from "./app/walletJobs.js";
import type { CompletionPipeline } from "./completions/completionPipeline.js";
import type { GatewayMetrics } from "./observability/metrics.js";
import type { TargetPolicy } from "./webhooks/targetPolicy.js";
import type { GatewayConfig } from "./config.js";
import type { IndexLagMonitor } from "./readModel/indexLag.js";
import type { IndexReader } from "./readModel/indexReader.js";
import type { ModelDirectory } from "./readModel/modelDirectory.js";
import type { IdempotencyStore } from "./jobs/idempotencyStore.js";
import type { JobLifecycle } from "./jobs/jobLifecycle.js";
import type { JobStore } from "./jobs/jobStore.js";
import type { ModelTrust } from "./jobs/modelTrust.js";
import type { LatencyStats } from "./workerPool/latencyStats.js";
import type { WorkerPool } from "./workerPool/workerPool.js";

/**
 * What the HTTP endpoints use (`endpoints/`), built once in main.ts (the only place that wires). The request
 * pipeline and the background tasks do not take it: each declares the few things it uses (`PrepareDeps`,
 * `EscrowDeps`, `RelayDeps`, `ConcludeDeps`, `SweepDeps`, `TakeOverDeps`, `LifecycleDeps`; api/README.md
 * "Where to read"), and main.ts hands each exactly those.
 */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  /** The process's Prometheus metrics (`/metrics`). */
  metrics: GatewayMetrics;
  pool: pg.Pool;
  deployment: Deployment;
  chain: EscrowChain;
  /** The completion endpoints' money path: check, escrow, run, conclude (completions/completionPipeline.ts). */
  completions: CompletionPipeline;
  index: IndexReader;
  /** Index lag sampled in the background (metrics, /readyz, the staleness header). */
  indexLag: IndexLagMonitor;
  models: ModelDirectory;
  workers: WorkerPool;
  latency: LatencyStats;
  jobs: JobStore;
  /** The only writer of `gateway_job.status` (here: a dispute's → disputed; api/jobs/jobLifecycle.ts). */
  lifecycle: JobLifecycle;
  /** The models' trust figures, cached (`/v1/models` and the web app's Models page share it). */
  modelTrust: ModelTrust;
  idempotency: IdempotencyStore;
  /** Which webhook receiver URLs `POST /v1/webhooks` accepts (WEBHOOK_ALLOW_*). */
  webhookPolicy: TargetPolicy;
  /** The web app's backend: chain reads and sign-in checks, the wallet's jobs and activity, the session lookup. */
  appPublicClient: PublicClient;
  walletJobs: WalletJobs;
  walletActivity: WalletActivity;
  resolveWallet: ResolveWallet;
}
