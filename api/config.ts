import { z } from "zod";

const boolean = z.enum(["true", "false", "1", "0"]).transform((value) => value === "true" || value === "1");

/**
 * Every setting of the gateway (the `/v1` API, the web app's backend, the in-process webhook dispatcher), read
 * once at start-up by `api/main.ts` and passed down; a bad value stops the start with a clear list. The only module
 * that knows the environment's variable names (the dispatcher's own process reads a subset, below).
 */
export const configSchema = z.object({
  API_HOST: z.string().default("127.0.0.1"),
  API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Public root of this API (used for links in responses and docs). */
  PUBLIC_BASE_URL: z.url().optional(),
  /** `{docs_url}` of the spec; error bodies link `{docs_url}/errors#<code>`. Defaults to the gateway's own /docs
   *  (the docs site it serves, docs-site/); an http(s) URL, a trailing slash dropped (else the links get `//`). */
  DOCS_URL: z
    .url({ protocol: /^https?$/, error: "an http(s) URL" })
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /** `{app_url}` of the spec (the web application). */
  APP_URL: z.url().optional(),
  /** `{explorer_url}` of the spec; locally the web app's explorer page. */
  EXPLORER_URL: z.url().optional(),
  DATABASE_URL: z.string().min(1),
  /** Postgres schema of the gateway's own tables (the index lives in Ponder's schema). */
  API_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/)
    .default("api"),
  /**
   * PostgreSQL's `synchronous_commit` for the gateway's connections (docs/DESIGN.md "Commit durability"). `off`
   * (default): a commit returns once its WAL is written to the server's buffers, not flushed to disk (~0.3 ms
   * instead of ~2.6 ms on the bench machine, and four commits sit on a whole completion's path). A gateway crash
   * loses nothing; only a crash of the database server itself can lose its last ~0.6 s of commits, which the chain
   * (the authority for money) and recovery make good. `on` waits for the flush on every commit.
   */
  DB_SYNCHRONOUS_COMMIT: z.enum(["off", "local", "on"]).default("off"),
  /**
   * Parameterised queries run as named prepared statements, planned once per connection (api/db/preparingClient.ts;
   * docs/DESIGN.md "Prepared statements"). `false` for a pooler in transaction mode that cannot keep them (PgBouncer
   * before 1.21, or without `max_prepared_statements`).
   */
  DB_PREPARED_STATEMENTS: boolean.default(true),
  /** Ponder's HTTP root; the gateway queries `${INDEXER_URL}/sql` through @ponder/client. */
  INDEXER_URL: z.url(),
  /** The chain's JSON-RPC endpoint; with RPC_URLS, the first of them by default. */
  RPC_URL: z.url().optional(),
  /** Several JSON-RPC endpoints of the same chain, comma separated, best first: reads go through a ranked
   *  fallback over them, transactions are broadcast to all (api/chain/createChainClients.ts). Default: RPC_URL. */
  RPC_URLS: z
    .string()
    .transform((value) =>
      value
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part.length > 0),
    )
    .pipe(z.array(z.url()).min(1))
    .optional(),
  /** The operator's cap on maxFeePerGas, gwei: no transaction or replacement pays more; above it, transactions
   *  wait in the mempool until the base fee falls back (api/chain/transactionManager.ts). */
  TX_MAX_FEE_PER_GAS_GWEI: z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .default("100"),
  /** Floor of the priority fee, gwei (chains whose blocks carry no tips report 0). */
  TX_MIN_PRIORITY_FEE_GWEI: z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .default("0.001"),
  /** A gateway transaction not mined this long after it was (re)broadcast is replaced with fees ≥ 12.5% higher. */
  TX_REPLACE_AFTER_MS: z.coerce.number().int().positive().default(4_000),
  /** Period of the transaction manager's watch (mined, dropped, orphaned, stuck, nonce gaps). */
  TX_MONITOR_MS: z.coerce.number().int().positive().default(1_000),
  /** /readyz answers 503 while the oldest gateway transaction not yet mined is older than this. */
  TX_PENDING_READY_MAX_MS: z.coerce.number().int().positive().default(30_000),
  /** Blocks after which a chain fact counts as final (the block that holds it and those on top of it): webhooks
   *  announce chain facts only then (docs/DESIGN.md "Finality"). 1 suits an automine chain only (blocks come with
   *  transactions; nothing reorgs on its own); the local stack sets 2 when the chain mines on a clock. */
  CHAIN_FINALITY_DEPTH: z.coerce.number().int().min(1).default(1),
  DEPLOYMENTS_FILE: z.string().min(1),
  /** Key of the account holding GATEWAY_ROLE on the escrow and the dispute contract. */
  GATEWAY_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "a 0x-prefixed 32-byte hex private key"),
  /** Shared secret the gateway presents to workers. */
  WORKER_GATEWAY_TOKEN: z.string().min(16),
  /** Job timeout; the spec's 120 s. Lower only in tests. */
  JOB_TIMEOUT_MS: z.coerce.number().int().positive().default(120_000),
  /** `submitted` (default): route once the lock's batch transaction is signed and accepted by the node; a lock
   *  the chain then skips stops the job, charging nothing. `confirmed`: route only after the lock is mined
   *  (a block time more per request; see api/README.md "Lock modes" for the trade-off). */
  LOCK_MODE: z.enum(["confirmed", "submitted"]).default("submitted"),
  /** Most locks in one openJobBatch transaction (group commit: api/chain/lockBatcher.ts). */
  LOCK_BATCH_MAX: z.coerce.number().int().min(1).max(200).default(100),
  /** Bound on the credits of jobs this gateway has routed on locks not yet mined (`submitted` mode); a job
   *  beyond it waits for its lock to be mined before it is routed, as in `confirmed` mode. */
  LOCK_UNCONFIRMED_MAX_CREDITS: z.coerce.number().int().min(0).default(100_000),
  /** Postgres schema Ponder writes the index into (the indexer's DATABASE_SCHEMA); the reservation ledger and
   *  the completion path's key check read it with SQL. */
  INDEX_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/)
    .default("chain_index"),
  /** Before answering "insufficient credits" or "unknown key", wait at most this long for the index to catch up
   *  with the chain head (a deposit or a key registered just before the request). */
  LEDGER_FRESHNESS_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(2_000),
  /** An active key read from the index is reused for completions for at most this long, and only until the index
   *  announces a change to its key table (api/ledger/activeKeyCache.ts); 0 reads the index for every request. */
  INDEX_KEY_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  /** A reservation neither confirmed by the index nor released is dropped after this long (a gateway killed
   *  between reserving and sending its lock). */
  LEDGER_RESERVATION_TTL_MS: z.coerce.number().int().positive().default(300_000),
  /** How often the ledger releases reservations whose lock the index now shows (and renews this gateway's slices). */
  LEDGER_SWEEP_MS: z.coerce.number().int().positive().default(100),
  /** Credits leased per gateway (docs/DESIGN.md "Credit slices"); false: one statement on the wallet's row per job. */
  LEDGER_SLICES: boolean.default(true),
  /** A slice its gateway stopped renewing (killed) is deleted by any gateway after this long; its credits return. */
  LEDGER_SLICE_TTL_MS: z.coerce.number().int().min(1_000).default(15_000),
  /** A slice unused for this long gives its unused credits back to the wallet. */
  LEDGER_SLICE_IDLE_MS: z.coerce.number().int().positive().default(1_000),
  /** A request the ledger cannot cover while peers' slices hold the wallet's credits waits at most this long for them. */
  LEDGER_SLICE_RECALL_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(1_000),
  SETTLEMENT_BATCH_MAX: z.coerce.number().int().min(1).max(200).default(50),
  /** Settlements waiting in the window leave with the next lock batch, in one `openAndSettleBatch` transaction. */
  SETTLEMENTS_RIDE_LOCKS: boolean.default(true),
  SETTLEMENT_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(10_000).default(25),
  /** Per-IP burst limit: requests per window. */
  RATE_LIMIT_MAX: z.coerce.number().int().positive().default(600),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * Proxies whose `X-Forwarded-For` names the client (Express `trust proxy`): comma-separated addresses, CIDRs or
   * Express's names (`loopback`, `linklocal`, `uniquelocal`). Empty (default): none, the client address used for
   * the burst limit is the connection's own, whatever headers it sends. Every trusted proxy must set the header
   * itself and drop the client's (the local stack's GATEWAYS proxy does: scripts/stack/gatewayProxy.ts).
   */
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    ),
  /** Time a client has to send a request's headers (ms); a connection that trickles them is answered 408. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** Time a client has to send a whole request, headers and body (ms); never applies to the answer (streams). */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  /** An idle kept-alive connection is closed after this long (ms). */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  BODY_LIMIT: z.string().default("1mb"),
  /** Default max_tokens when a request gives none (caps the escrow estimate). */
  DEFAULT_MAX_TOKENS: z.coerce.number().int().positive().default(1024),
  MAX_MESSAGES: z.coerce.number().int().positive().default(1024),
  /** Plain-HTTP webhook URLs to loopback hosts, for local development only. */
  WEBHOOK_ALLOW_HTTP_LOOPBACK: boolean.default(false),
  /** Allow private/loopback webhook targets (never in production). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean.default(false),
  /** Delays between webhook attempts, ms, comma separated: attempt 1 immediately … attempt 5 after 2 h. */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .default("0,30000,300000,1800000,7200000")
    .transform((value) => value.split(",").map((part) => Number(part.trim())))
    .pipe(z.array(z.number().int().min(0)).length(5)),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** PEM file of an extra CA trusted for webhook receivers (added to Node's roots); tests and private PKIs. */
  WEBHOOK_CA_FILE: z.string().min(1).optional(),
  /** How often viem polls the node for receipts and blocks; low on local chains. */
  RPC_POLLING_INTERVAL_MS: z.coerce.number().int().positive().default(250),
  /** Each JSON-RPC attempt gives up after this long (connection errors and timeouts are retried twice). */
  RPC_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** Auth reads a key's status from the chain for at most this long, then uses the last known status or the
   *  index; after a miss the chain is skipped until it answers a background probe again. */
  KEY_STATUS_CHAIN_TIMEOUT_MS: z.coerce.number().int().positive().default(500),
  /** Every read of the index gives up after this long. */
  INDEX_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  /** After a failed index read, reads fail fast for this long (one probe per period). */
  INDEX_RETRY_MS: z.coerce.number().int().positive().default(1_000),
  /** How old the last known catalog, worker list, account or key status may be and still be served while the
   *  index is down (beyond it: 503 service_unavailable with retry_after). */
  INDEX_STALE_MAX_MS: z.coerce.number().int().positive().default(600_000),
  /** Index lag (seconds) beyond which /readyz answers 503. */
  INDEX_LAG_READY_MAX_SECONDS: z.coerce.number().positive().default(30),
  /** How often the index lag (chain head vs indexed block) is sampled for /metrics and /readyz. */
  INDEX_LAG_SAMPLE_MS: z.coerce.number().int().positive().default(1_000),
  /** Each dependency check of /readyz gives up after this long. */
  READY_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  /** A job row whose escrow transaction was never sent (crash before sending) is failed after this long. */
  ESCROW_UNSENT_GRACE_MS: z.coerce.number().int().positive().default(30_000),
  /** Worker /healthz probe period and timeout. */
  WORKER_PROBE_INTERVAL_MS: z.coerce.number().int().positive().default(2_000),
  WORKER_PROBE_TIMEOUT_MS: z.coerce.number().int().positive().default(1_500),
  /** A lock sent by one of this deployment's gateway signers whose job row never committed (its gateway died
   *  between the two) is failed once it is this old on chain, instead of refunded at its chain deadline. Far above
   *  a row insert's worst case (its query timeout): a live gateway's row is always there by then. */
  ORPHAN_LOCK_GRACE_MS: z.coerce.number().int().positive().default(60_000),
  /** Period of the sweeper that settles or refunds jobs left open (crash recovery, expired escrows). */
  SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(10_000),
  /** How long shutdown waits for running jobs before leaving them to recovery. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  /** This gateway's name among several sharing one database (its jobs and lease carry it; docs/DESIGN.md,
   *  "Several gateways"). Default: `gw-` and the signer's address, so each signer is its own gateway. The pattern
   *  keeps it safe inside a Postgres startup option (api/db/createPool.ts). */
  GATEWAY_ID: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, "lowercase letters, digits, _ . : - (at most 64)")
    .optional(),
  /** A gateway whose lease is not renewed for this long counts as dead: a peer takes over its open jobs. */
  GATEWAY_LEASE_TTL_MS: z.coerce.number().int().min(1_000).default(15_000),
  /** Lease renewal period, also how often dead peers are looked for (below GATEWAY_LEASE_TTL_MS). */
  GATEWAY_HEARTBEAT_MS: z.coerce.number().int().min(100).default(3_000),
  /** Run the webhook dispatcher inside the gateway process (off when it runs as its own process). */
  WEBHOOK_DISPATCHER_ENABLED: boolean.default(true),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // The web application's backend (/app/*).
  /**
   * Development mode: on a local chain (31337) the app offers the demo wallet and a test-stablecoin faucet.
   * Never set in production.
   */
  APP_DEV_MODE: boolean.default(false),
  /** Folder of the built web app (`web/dist`); when set the gateway serves it at `/`. */
  WEB_DIST_DIR: z.string().min(1).optional(),
  /** Public RPC URL the browser uses; without it the gateway proxies its own RPC_URL at /app/rpc. */
  APP_RPC_URL: z.url().optional(),
  /** Session lifetime, seconds (default 24 h). */
  APP_SESSION_TTL_S: z.coerce.number().int().positive().default(86_400),
  /** SIWE nonce lifetime, seconds (default 10 min). */
  APP_NONCE_TTL_S: z.coerce.number().int().positive().default(600),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
});

export type GatewayConfig = Omit<z.infer<typeof configSchema>, "RPC_URL" | "RPC_URLS"> & {
  DOCS_URL: string;
  PUBLIC_BASE_URL: string;
  /** The first endpoint (the web app's RPC proxy and dev faucet use it). */
  RPC_URL: string;
  RPC_URLS: string[];
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

function parseOrConfigError<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv, what: string): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid ${what} configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = parseOrConfigError(configSchema, env, "gateway");
  const publicBaseUrl = config.PUBLIC_BASE_URL ?? `http://${config.API_HOST}:${config.API_PORT}`;
  const rpcUrls = config.RPC_URLS ?? (config.RPC_URL ? [config.RPC_URL] : []);
  const rpcUrl = config.RPC_URL ?? rpcUrls[0];
  if (rpcUrl === undefined) throw new ConfigError("Invalid gateway configuration:\n  RPC_URL: set RPC_URL or RPC_URLS");
  return {
    ...config,
    RPC_URL: rpcUrl,
    RPC_URLS: rpcUrls,
    PUBLIC_BASE_URL: publicBaseUrl,
    DOCS_URL: config.DOCS_URL ?? `${publicBaseUrl}/docs`,
  };
}

/**
 * The settings of a webhook dispatcher run as a process of its own (`api/webhooks/runDispatcher.ts`): the
 * gateway's database, index and WEBHOOK_* settings, and the dispatcher's own name, lease and batch size.
 */
export const dispatcherConfigSchema = configSchema
  .pick({
    DATABASE_URL: true,
    DB_SYNCHRONOUS_COMMIT: true,
    DB_PREPARED_STATEMENTS: true,
    CHAIN_FINALITY_DEPTH: true,
    API_DB_SCHEMA: true,
    INDEXER_URL: true,
    WEBHOOK_ALLOW_HTTP_LOOPBACK: true,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
    WEBHOOK_RETRY_SCHEDULE_MS: true,
    WEBHOOK_TIMEOUT_MS: true,
    WEBHOOK_CA_FILE: true,
  })
  .extend({
    WEBHOOK_DISPATCHER_NAME: z.string().min(1).optional(),
    /** Lease of a claimed delivery (ms); default WEBHOOK_TIMEOUT_MS + 30 s. Tests shorten it. */
    WEBHOOK_LEASE_MS: z.coerce.number().int().positive().optional(),
    /** Deliveries claimed per round; default 32. */
    WEBHOOK_DISPATCH_BATCH: z.coerce.number().int().min(1).max(500).optional(),
  });

export type DispatcherConfig = z.infer<typeof dispatcherConfigSchema>;

/** Parses the dispatcher process's environment; throws a ConfigError naming every bad variable. */
export function loadDispatcherConfig(env: NodeJS.ProcessEnv): DispatcherConfig {
  return parseOrConfigError(dispatcherConfigSchema, env, "dispatcher");
}
