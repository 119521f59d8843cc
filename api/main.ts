import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { Router, type RequestHandler } from "express";
import { pino, type Logger } from "pino";
import { parseGwei, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { loadDeployment } from "@credit-metered/client/node";
import { serveWeb } from "./app/serveWeb.js";
import { sessionWalletResolver } from "./app/sessionWallet.js";
import { WalletActivity } from "./app/walletActivity.js";
import { WalletJobs } from "./app/walletJobs.js";
import { appPublicClient } from "./app/webAppContext.js";
import { createChainClients } from "./chain/createChainClients.js";
import { serializeError } from "./chain/serializeError.js";
import { EscrowChain } from "./chain/escrowChain.js";
import { KeyStatusCache } from "./chain/keyStatusCache.js";
import { LockBatcher } from "./chain/lockBatcher.js";
import { SettlementBatcher } from "./chain/settlementBatcher.js";
import { FeeOracle } from "./chain/feeOracle.js";
import { RawTransactionPipe } from "./chain/rawTransactionPipe.js";
import { TransactionManager } from "./chain/transactionManager.js";
import { TransactionSender } from "./chain/transactionSender.js";
import { TransactionStore } from "./chain/transactionStore.js";
import { keccakBackend, secp256k1Backend, transactionAccount } from "./chain/secp256k1.js";
import { loadConfig, type GatewayConfig } from "./config.js";
import { createPool } from "./db/createPool.js";
import { endpointsFor, routerOf } from "./endpoints/index.js";
import { migrate } from "./db/migrate.js";
import type { GatewayDeps } from "./deps.js";
import { createApp } from "./http/createApp.js";
import { createHttpServer } from "./http/createHttpServer.js";
import { authenticate } from "./http/middleware/authenticate.js";
import { burstLimit } from "./http/rateLimit.js";
import { warmUpCounting } from "../shared/tokens/countChatTokens.js";
import { ChainKeyDirectory } from "./readModel/chainKeyDirectory.js";
import { IndexClient } from "./readModel/indexClient.js";
import { IndexLagMonitor } from "./readModel/indexLag.js";
import { IndexReader } from "./readModel/indexReader.js";
import { ModelDirectory } from "./readModel/modelDirectory.js";
import { CreditLedger, INDEX_KEY_TABLE } from "./ledger/creditLedger.js";
import { IndexFreshness } from "./ledger/indexFreshness.js";
import { IndexKeyDirectory } from "./ledger/indexKeyDirectory.js";
import { ActiveKeyCache } from "./ledger/activeKeyCache.js";
import { UnconfirmedLocks } from "./ledger/unconfirmedLocks.js";
import { GatewayLeases } from "./jobs/gatewayLeases.js";
import { IdempotencyStore } from "./jobs/idempotencyStore.js";
import { createJobLifecycle, type WaitForChainDeadline } from "./jobs/jobLifecycleOf.js";
import { CompletionPipeline } from "./completions/completionPipeline.js";
import { JobStore } from "./jobs/jobStore.js";
import { ModelTrust } from "./jobs/modelTrust.js";
import { sweepJobs } from "./jobs/sweepJobs.js";
import { GatewayMetrics, logRequests, observeRequests } from "./observability/index.js";
import { REDACT_PATHS } from "./observability/redactPaths.js";
import { LatencyStats } from "./workerPool/latencyStats.js";
import { WorkerClient } from "./workerPool/workerClient.js";
import { WorkerPool } from "./workerPool/workerPool.js";
import { chainEventFeed, dispatcherDepsFrom, startDispatcher, targetPolicyFrom } from "./webhooks/index.js";
import { buildDocsSite } from "../docs-site/site.js";
import { serveDocs } from "./docs/serveDocs.js";

export interface StartGatewayOptions {
  logger?: Logger;
  /** Replaces the wait for the chain's job deadline before a timeout refund (tests: `evm_increaseTime`). */
  waitForChainDeadline?: WaitForChainDeadline;
  /** Extra routers mounted before /v1 (e.g. the webhooks routes, the web app backend). They may use `deps`. */
  extraRouters?: (deps: GatewayDeps) => Router[];
}

export interface RunningGateway {
  /** `http://host:port` the gateway listens on (API_PORT 0 picks a free port). */
  url: string;
  port: number;
  deps: GatewayDeps;
  /** Stops accepting, lets running jobs finish (up to SHUTDOWN_GRACE_MS), flushes settlements, closes the pool. */
  close: () => Promise<void>;
}

/**
 * Waits until the chain's time has passed the deadline: the latest block's timestamp, or the wall clock (a node
 * mining on demand stamps the next block with at least the current time).
 */
function waitForChainTime(chain: EscrowChain): WaitForChainDeadline {
  return async (deadline) => {
    for (;;) {
      const wall = BigInt(Math.floor(Date.now() / 1000));
      const block = await chain.latestBlockTimestamp().catch(() => 0n);
      if (wall > deadline || block > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, Number(deadline - wall) * 1000 + 100)));
    }
  };
}

export function createLogger(config: GatewayConfig): Logger {
  return pino({
    level: config.LOG_LEVEL,
    base: { service: "gateway" },
    // Keys and secrets never reach a log line.
    redact: {
      paths: REDACT_PATHS,
      censor: "[redacted]",
    },
    serializers: { err: serializeError },
  });
}

/** Blocks a mined gateway transaction is watched for at least (a reorg within them is repaired). */
const TX_MIN_KEEP_BLOCKS = 6;
/** Active keys kept in memory for authenticating completions (~200 bytes each). */
const ACTIVE_KEYS_KEPT = 10_000;

/** Builds every dependency, migrates, recovers open jobs, and listens. */
export async function startGateway(config: GatewayConfig, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger(config);
  const metrics = new GatewayMetrics();
  const signer = privateKeyToAccount(config.GATEWAY_PRIVATE_KEY as Hex).address.toLowerCase();
  const gatewayId = config.GATEWAY_ID ?? `gw-${signer}`;
  const pool = createPool(config.DATABASE_URL, config.API_DB_SCHEMA, undefined, gatewayId, {
    synchronousCommit: config.DB_SYNCHRONOUS_COMMIT,
    prepareStatements: config.DB_PREPARED_STATEMENTS,
  });
  const applied = await migrate(pool, config.API_DB_SCHEMA);
  if (applied.length > 0) logger.info({ applied }, "migrations applied");

  const deployment = loadDeployment(config.DEPLOYMENTS_FILE);
  const clients = createChainClients(
    config.RPC_URLS,
    deployment.chainId,
    config.GATEWAY_PRIVATE_KEY as Hex,
    config.RPC_POLLING_INTERVAL_MS,
    config.RPC_TIMEOUT_MS,
  );
  // Transactions signed by libsecp256k1 where its binding loads (api/chain/secp256k1.ts).
  const gatewayAccount = transactionAccount(config.GATEWAY_PRIVATE_KEY as Hex);
  logger.info({ secp256k1: secp256k1Backend, keccak: keccakBackend }, "transaction signing and receipt recovery");
  const transactions = new TransactionManager({
    chainId: deployment.chainId,
    account: gatewayAccount,
    log: new TransactionStore(pool, deployment.chainId, gatewayAccount.address),
    client: clients.publicClient,
    pipe: new RawTransactionPipe(config.RPC_URLS),
    fees: new FeeOracle(clients.publicClient, {
      maxFeePerGas: parseGwei(config.TX_MAX_FEE_PER_GAS_GWEI),
      minPriorityFeePerGas: parseGwei(config.TX_MIN_PRIORITY_FEE_GWEI),
    }),
    replaceAfterMs: config.TX_REPLACE_AFTER_MS,
    // Kept a few blocks past finality even where it is 1 (automine), so a reorg injected there is still repaired.
    finalityDepth: Math.max(config.CHAIN_FINALITY_DEPTH, TX_MIN_KEEP_BLOCKS),
    monitorMs: config.TX_MONITOR_MS,
    receiptPollMs: config.RPC_POLLING_INTERVAL_MS,
    logger,
  });
  // Reloads the unfinished transactions of a previous run and repairs them before anything new is signed.
  await transactions.start();
  const sender = new TransactionSender(clients, transactions);
  const chain = new EscrowChain(clients, deployment, sender);
  const batcher = new SettlementBatcher(
    {
      settle: (receipt, signature) => chain.settle(receipt, signature),
      settleBatch: (receipts, signatures) => chain.settleBatch(receipts, signatures),
      waitMined: (hash) => sender.waitMined(hash),
      skippedJobs: (receipt) => chain.skippedJobsOf(receipt),
    },
    { windowMs: config.SETTLEMENT_BATCH_WINDOW_MS, max: config.SETTLEMENT_BATCH_MAX, logger, metrics },
  );
  // The one client of the indexer: the read model, the web app's views and the webhook dispatcher share it.
  const indexClient = new IndexClient(config.INDEXER_URL, {
    timeoutMs: config.INDEX_TIMEOUT_MS,
    retryMs: config.INDEX_RETRY_MS,
  });
  const index = new IndexReader(indexClient);
  const indexLag = new IndexLagMonitor(chain, index, {
    sampleMs: config.INDEX_LAG_SAMPLE_MS,
    timeoutMs: config.READY_CHECK_TIMEOUT_MS,
    logger,
  });
  const latency = new LatencyStats();
  const workerClient = new WorkerClient(config.WORKER_GATEWAY_TOKEN);
  const workers = new WorkerPool(index, workerClient, latency, logger, {
    probeIntervalMs: config.WORKER_PROBE_INTERVAL_MS,
    probeTimeoutMs: config.WORKER_PROBE_TIMEOUT_MS,
    maxRecentFailures: 3,
    minStake: BigInt(deployment.params.minStake),
  });
  const locks = new LockBatcher(
    {
      openJobBatch: (requests, onSigned, settlements) => chain.openJobBatch(requests, onSigned, settlements),
      ridersBeside: (count) => chain.ridersBeside(count),
      waitMined: (hash) => sender.waitMined(hash),
      outcomesOf: (receipt) => chain.lockOutcomesOf(receipt),
    },
    {
      max: config.LOCK_BATCH_MAX,
      logger,
      metrics,
      ...(config.SETTLEMENTS_RIDE_LOCKS ? { riders: batcher } : {}),
    },
  );
  const ledger = new CreditLedger(pool, {
    indexSchema: config.INDEX_DB_SCHEMA,
    reservationTtlMs: config.LEDGER_RESERVATION_TTL_MS,
    slices: config.LEDGER_SLICES
      ? {
          owner: gatewayId,
          ttlMs: config.LEDGER_SLICE_TTL_MS,
          idleMs: config.LEDGER_SLICE_IDLE_MS,
          recallWaitMs: config.LEDGER_SLICE_RECALL_WAIT_MS,
          // A peer renews its slices every sweep; one silent for several is presumed dead.
          peerFreshMs: Math.max(1_000, 10 * config.LEDGER_SWEEP_MS),
        }
      : undefined,
  });
  const freshness = new IndexFreshness(indexLag, config.LEDGER_FRESHNESS_WAIT_MS);
  const jobs = new JobStore(pool, { logger });
  const waitForChainDeadline = options.waitForChainDeadline ?? waitForChainTime(chain);
  const lifecycle = createJobLifecycle({
    jobs,
    chain,
    batcher,
    waitForChainDeadline,
    logger,
    config,
    chainJobTimeoutSeconds: deployment.params.jobTimeout,
  });
  const keys = new ChainKeyDirectory(
    new KeyStatusCache(chain, { timeoutMs: config.KEY_STATUS_CHAIN_TIMEOUT_MS, retryMs: config.INDEX_RETRY_MS }),
    index,
    logger,
  );
  const models = new ModelDirectory(index, 1_000, config.INDEX_STALE_MAX_MS);
  // Jobs this process is running right now (the sweeper and the take-over leave them alone).
  const activeJobs = new Set<string>();
  const leases = new GatewayLeases(pool, {
    gatewayId,
    signer,
    ttlMs: config.GATEWAY_LEASE_TTL_MS,
    heartbeatMs: config.GATEWAY_HEARTBEAT_MS,
    logger,
  });
  // Set once the webhook dispatcher runs: a job's acknowledgement wakes it so job.processing goes out at once.
  let wakeDispatcher: (() => void) | undefined;
  // Each step of a completion gets what it uses, nothing more (api/README.md "Where to read").
  const completions = new CompletionPipeline({
    prepare: { models, workers, ledger, freshness, chain, config },
    escrow: {
      ledger,
      freshness,
      jobs,
      locks,
      chain,
      lifecycle,
      unconfirmedLocks: new UnconfirmedLocks(config.LOCK_UNCONFIRMED_MAX_CREDITS, metrics),
      metrics,
      config,
      chainJobTimeoutSeconds: deployment.params.jobTimeout,
      logger,
    },
    relay: {
      workers,
      workerClient,
      chain,
      lifecycle,
      jobs,
      latency,
      metrics,
      onJobProcessing: () => wakeDispatcher?.(),
      config,
      logger,
    },
    conclude: { lifecycle },
    activeJobs,
  });
  const deps: GatewayDeps = {
    config,
    logger,
    metrics,
    pool,
    deployment,
    chain,
    completions,
    index,
    indexLag,
    models,
    workers,
    latency,
    jobs,
    lifecycle,
    modelTrust: new ModelTrust(pool, index, logger),
    idempotency: new IdempotencyStore(pool),
    webhookPolicy: targetPolicyFrom(config),
    appPublicClient: appPublicClient(config, deployment),
    walletJobs: new WalletJobs(indexClient),
    walletActivity: new WalletActivity(indexClient, pool),
    resolveWallet: sessionWalletResolver(pool, deployment.chainId),
  };
  metrics.bind({
    activeJobs,
    query: (sql) => pool.query(sql),
    workers: () => workers.health(),
    indexLag: () => indexLag.snapshot(),
    transactions: () => transactions.health(),
  });
  indexLag.start();
  chain.nodeSilent = () => {
    const sample = indexLag.snapshot();
    return sample.sampledAt > 0 && !sample.chainUp;
  };

  // The docs site (`{docs_url}` by default: error bodies link to its errors page), built in memory: a few ms.
  const docsSite = await buildDocsSite({ apiBaseUrl: config.PUBLIC_BASE_URL });
  // The token counter is built and its long-prompt path compiled now, not on the first completion.
  await warmUpCounting();
  await workers.refresh();
  workers.start();
  // Webhook deliveries (api/webhooks): chain events from the index, job.processing from gateway_job.
  // Active keys for completions, kept while the dispatcher's LISTEN hears the index's blocks (no dispatcher, no cache).
  const activeKeys = new ActiveKeyCache({
    table: INDEX_KEY_TABLE,
    maxAgeMs: config.INDEX_KEY_CACHE_MS,
    maxEntries: ACTIVE_KEYS_KEPT,
  });
  const dispatcher = config.WEBHOOK_DISPATCHER_ENABLED
    ? startDispatcher(
        dispatcherDepsFrom(config, pool, {
          index: chainEventFeed(indexClient, { finalityDepth: config.CHAIN_FINALITY_DEPTH }),
          logger: logger.child({ component: "webhooks" }),
          indexTables: activeKeys,
        }),
      )
    : undefined;
  if (dispatcher) wakeDispatcher = () => dispatcher.jobProcessing();

  // Reservations whose lock the index now shows are released in the background (every gateway may run it).
  const ledgerTimer = setInterval(() => {
    ledger.releaseIndexed().catch((error: unknown) => logger.debug({ err: error }, "ledger sweep failed"));
  }, config.LEDGER_SWEEP_MS);
  ledgerTimer.unref();

  const v1 = Router();
  // Completions authenticate from the index (no RPC on the hot path; a revocation not yet indexed is refused by
  // the escrow's lock); the other routes keep the chain's per-block key check.
  v1.use("/v1/chat/completions", authenticate(new IndexKeyDirectory(ledger, freshness, keys, activeKeys)));
  v1.use("/v1", authenticate(keys));
  v1.use(routerOf(endpointsFor("apiKey"), deps));
  const logging = Router();
  logging.use(logRequests(logger));
  // Requests are counted from before the burst limit, so 429 answers show up in the metrics too.
  const observe = observeRequests(metrics);
  const limit = burstLimit({ limit: config.RATE_LIMIT_MAX, windowMs: config.RATE_LIMIT_WINDOW_MS });
  const countedBurstLimit: RequestHandler = (req, res, next) => observe(req, res, () => limit(req, res, next));
  const app = createApp({
    docsUrl: config.DOCS_URL,
    bodyLimit: config.BODY_LIMIT,
    logger,
    trustedProxies: config.TRUSTED_PROXIES,
    rateLimit: countedBurstLimit,
    routers: [
      logging,
      routerOf(endpointsFor("open"), deps),
      serveDocs(docsSite),
      ...(options.extraRouters?.(deps) ?? []),
      v1,
      routerOf(endpointsFor("webApp"), deps),
      ...(config.WEB_DIST_DIR ? [serveWeb(config.WEB_DIST_DIR)] : []),
    ],
  });

  await leases.start({ lifecycle, chain, activeJobs, logger });
  // Recovery: jobs a previous run left open are settled or refunded, in the background (a refund may have to
  // wait for its deadline); then the same sweep runs periodically.
  const sweep = {
    lifecycle,
    jobs,
    chain,
    index,
    activeJobs,
    leases,
    logger,
    orphanLockGraceMs: config.ORPHAN_LOCK_GRACE_MS,
    signers: () => leases.signers(),
  };
  let sweeping: Promise<void> | undefined = sweepJobs(sweep)
    .catch((error: unknown) => logger.error({ err: error }, "recovery sweep failed"))
    .finally(() => {
      sweeping = undefined;
    });
  const sweepTimer = setInterval(() => {
    sweeping ??= sweepJobs(sweep)
      .catch((error: unknown) => logger.error({ err: error }, "sweep failed"))
      .finally(() => {
        sweeping = undefined;
      });
  }, config.SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  const server = createHttpServer(app, config);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.API_PORT, config.API_HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.API_HOST}:${port}`;
  logger.info(
    { url, chain_id: deployment.chainId, escrow: deployment.contracts.creditEscrow, gateway_id: gatewayId },
    "gateway listening",
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      logger.info("gateway shutting down");
      clearInterval(sweepTimer);
      clearInterval(ledgerTimer);
      workers.stop();
      indexLag.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const until = Date.now() + config.SHUTDOWN_GRACE_MS;
      while (activeJobs.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      if (activeJobs.size > 0) logger.warn({ jobs: [...activeJobs] }, "leaving running jobs to recovery");
      await locks.drain();
      // The unused part of this gateway's slices goes back to the wallets now, not after the slice TTL.
      await ledger.close();
      await batcher.drain();
      await sweeping;
      await transactions.stop();
      // Jobs left to recovery go to a live peer now rather than after the lease would have expired.
      await leases.stop({ release: true });
      await dispatcher?.stop();
      server.closeAllConnections();
      await closed;
      await jobs.flush();
      await pool.end();
    })());
  return { url, port, deps, close };
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config);
  const gateway = await startGateway(config, { logger });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      logger.info({ signal }, "signal received");
      gateway.close().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed");
          process.exit(1);
        },
      );
    });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
