import type { Logger } from "pino";
import type pg from "pg";
import type { PublicClient } from "viem";
import type { Deployment } from "@credit-metered/client";
import type { EscrowChain } from "./chain/escrowChain.js";
import type { LockBatcher } from "./chain/lockBatcher.js";
import type { CreditLedger } from "./ledger/creditLedger.js";
import type { IndexFreshness } from "./ledger/indexFreshness.js";
import type { UnconfirmedLocks } from "./ledger/unconfirmedLocks.js";
import type { SettlementBatcher } from "./chain/settlementBatcher.js";
import type { ResolveWallet } from "./app/sessionWallet.js";
import type { WalletActivity } from "./app/walletActivity.js";
import type { WalletJobs } from "./app/walletJobs.js";
import type { GatewayMetrics } from "./observability/metrics.js";
import type { TargetPolicy } from "./webhooks/targetPolicy.js";
import type { GatewayConfig } from "./config.js";
import type { KeyDirectory } from "./http/middleware/authenticate.js";
import type { IndexLagMonitor } from "./readModel/indexLag.js";
import type { IndexReader } from "./readModel/indexReader.js";
import type { ModelDirectory } from "./readModel/modelDirectory.js";
import type { GatewayLeases } from "./jobs/gatewayLeases.js";
import type { IdempotencyStore } from "./jobs/idempotencyStore.js";
import type { JobLifecycle } from "./jobs/jobLifecycle.js";
import type { JobStore } from "./jobs/jobStore.js";
import type { ModelTrust } from "./jobs/modelTrust.js";
import type { LatencyStats } from "./workerPool/latencyStats.js";
import type { WorkerClient } from "./workerPool/workerClient.js";
import type { WorkerPool } from "./workerPool/workerPool.js";

import type { WaitForChainDeadline } from "./jobs/jobLifecycleOf.js";

/** Everything the endpoints and background tasks use, built once in main.ts (the only place that wires). */
export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  /** The process's Prometheus metrics; whoever records gets them from here. */
  metrics: GatewayMetrics;
  pool: pg.Pool;
  deployment: Deployment;
  chain: EscrowChain;
  batcher: SettlementBatcher;
  /** Escrow locks, group-committed through openJobBatch. */
  locks: LockBatcher;
  /** Credits per wallet from the index minus reservations (no RPC on the request path). */
  ledger: CreditLedger;
  /** Bounded wait for the index to catch up before refusing a request for credits or an unknown key. */
  freshness: IndexFreshness;
  /** Credits routed on locks not yet mined (the `submitted` mode's exposure bound). */
  unconfirmedLocks: UnconfirmedLocks;
  keys: KeyDirectory;
  index: IndexReader;
  /** Index lag sampled in the background (metrics, /readyz, the staleness header). */
  indexLag: IndexLagMonitor;
  models: ModelDirectory;
  workers: WorkerPool;
  workerClient: WorkerClient;
  latency: LatencyStats;
  jobs: JobStore;
  /** The only writer of `gateway_job.status` (settle, fail, refund, dispute; api/jobs/jobLifecycle.ts). */
  lifecycle: JobLifecycle;
  /** The models' trust figures, cached (`/v1/models` and the web app's Models page share it). */
  modelTrust: ModelTrust;
  idempotency: IdempotencyStore;
  waitForChainDeadline: WaitForChainDeadline;
  /** Jobs this process is running right now (the sweeper leaves them alone). */
  activeJobs: Set<string>;
  /** This gateway's lease among several sharing the database; the sweeper closes only its own jobs. */
  leases?: GatewayLeases;
  /** Called after a job is marked processing (wakes the webhook dispatcher so job.processing goes out at once). */
  onJobProcessing?: () => void;
  /** Which webhook receiver URLs `POST /v1/webhooks` accepts (WEBHOOK_ALLOW_*). */
  webhookPolicy: TargetPolicy;
  /** The web app's backend: chain reads and sign-in checks, the wallet's jobs and activity, the session lookup. */
  appPublicClient: PublicClient;
  walletJobs: WalletJobs;
  walletActivity: WalletActivity;
  resolveWallet: ResolveWallet;
}
