import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";

/** The several-gateways suite's own stack: ports from MULTIGW_STACK_PORT_BASE (default 12500), its own state. */
export const MULTIGW_PORT_BASE = Number(process.env.MULTIGW_STACK_PORT_BASE ?? 12500);
export const MULTIGW_STATE_DIR = path.join(repoRoot, ".local", "test-multigw");
export const multigwPorts = stackPorts(MULTIGW_PORT_BASE);
export const MULTIGW_GATEWAYS = 2;
/**
 * Seconds between blocks once the stack is set up (`CHAIN_BLOCK_TIME` of `npm start`): the take-over, settlement
 * batching and the escrow's deadlines are exercised on a chain with real block times, as on an L2. `0`: automine.
 */
export const MULTIGW_CHAIN_BLOCK_TIME = Number(process.env.MULTIGW_CHAIN_BLOCK_TIME ?? 1);

/** The escrow's job timeout: short, so a refund after the deadline stays observable within the suite's bound. */
export const MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS = 30;

/** Streams last about a second, so a SIGKILL lands while several jobs are being served. */
export const MULTIGW_WORKER_DEFAULTS = { ttftMs: 50, tokensPerSecond: 40, minOutputTokens: 20, maxOutputTokens: 40 };

/**
 * Timeouts compressed by configuration (api/config.ts) so a dead gateway's jobs are taken over within seconds:
 * each one is the production mechanism, only faster.
 */
export const MULTIGW_GATEWAY_ENV: Record<string, string> = {
  LOG_LEVEL: "info",
  JOB_TIMEOUT_MS: "15000",
  SWEEP_INTERVAL_MS: "1000",
  SHUTDOWN_GRACE_MS: "2000",
  ESCROW_UNSENT_GRACE_MS: "3000",
  ORPHAN_LOCK_GRACE_MS: "10000",
  GATEWAY_LEASE_TTL_MS: "3000",
  GATEWAY_HEARTBEAT_MS: "500",
  WEBHOOK_RETRY_SCHEDULE_MS: "0,500,1000,2000,3000",
  // A delivery the killed gateway's dispatcher had claimed is free again after its lease (attempt timeout + 30 s).
  WEBHOOK_TIMEOUT_MS: "2000",
};
