import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";

/** The chain-fault suite's own stack: ports from CHAINFAULTS_STACK_PORT_BASE (default 11300), its own state. */
export const CHAINFAULTS_PORT_BASE = Number(process.env.CHAINFAULTS_STACK_PORT_BASE ?? 11300);
export const CHAINFAULTS_STATE_DIR = path.join(repoRoot, ".local", "test-chainfaults");
export const chainfaultsPorts = stackPorts(CHAINFAULTS_PORT_BASE);
/** The RPC endpoint the suite can take down: a proxy in front of the node, the gateway's first (preferred) one. */
export const RPC_PROXY_PORT = CHAINFAULTS_PORT_BASE + 40;
export const RPC_PROXY_URL = `http://127.0.0.1:${RPC_PROXY_PORT}`;

/** Blocks a chain fact needs before it is announced; every reorg the suite injects is shallower. */
export const FINALITY_DEPTH = 4;
/** The operator's fee cap, gwei; the fee spike goes far above it. */
export const FEE_CAP_GWEI = 20;

/** Timeouts compressed by configuration (api/config.ts); each one is the production mechanism, only faster. */
export const CHAINFAULTS_GATEWAY_ENV: Record<string, string> = {
  LOG_LEVEL: "info",
  RPC_URLS: `${RPC_PROXY_URL},http://127.0.0.1:${chainfaultsPorts.rpc}`,
  RPC_TIMEOUT_MS: "1500",
  TX_MAX_FEE_PER_GAS_GWEI: String(FEE_CAP_GWEI),
  TX_REPLACE_AFTER_MS: "3000",
  TX_MONITOR_MS: "500",
  TX_PENDING_READY_MAX_MS: "6000",
  CHAIN_FINALITY_DEPTH: String(FINALITY_DEPTH),
  JOB_TIMEOUT_MS: "30000",
  SWEEP_INTERVAL_MS: "2000",
  SHUTDOWN_GRACE_MS: "2000",
  INDEX_LAG_SAMPLE_MS: "500",
  READY_CHECK_TIMEOUT_MS: "1000",
  WEBHOOK_RETRY_SCHEDULE_MS: "0,1000,2000,3000,4000",
};

/** Workers quick enough that many jobs pass during each fault. */
export const CHAINFAULTS_WORKER_DEFAULTS = {
  ttftMs: 30,
  tokensPerSecond: 200,
  minOutputTokens: 5,
  maxOutputTokens: 10,
};
