import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";

/** The chaos suite's own stack: ports from CHAOS_STACK_PORT_BASE (default 9400), its own state folder. */
export const CHAOS_PORT_BASE = Number(process.env.CHAOS_STACK_PORT_BASE ?? 9400);
export const CHAOS_STATE_DIR = path.join(repoRoot, ".local", "test-chaos");
export const chaosPorts = stackPorts(CHAOS_PORT_BASE);
/** Ports for a worker a test starts itself (after the pool's four). */
export const CHAOS_EXTRA_PORTS = { from: CHAOS_PORT_BASE + 10, to: CHAOS_PORT_BASE + 19 };

/** The escrow's job timeout on this chain: short, so a refund after a crash is observable in the run. */
export const CHAOS_CHAIN_JOB_TIMEOUT_SECONDS = 20;

/** Simulated workers slow enough that a stream is still running when a fault hits it. */
export const CHAOS_WORKER_DEFAULTS = { ttftMs: 50, tokensPerSecond: 40, minOutputTokens: 20, maxOutputTokens: 40 };

/**
 * Timeouts compressed by configuration (api/config.ts) so every recovery happens within the suite's ten minutes;
 * each one is the production mechanism, only faster.
 */
export const CHAOS_GATEWAY_ENV: Record<string, string> = {
  LOG_LEVEL: "info",
  JOB_TIMEOUT_MS: "15000",
  SWEEP_INTERVAL_MS: "2000",
  SHUTDOWN_GRACE_MS: "2000",
  WORKER_PROBE_INTERVAL_MS: "1000",
  RPC_TIMEOUT_MS: "3000",
  INDEX_TIMEOUT_MS: "1000",
  INDEX_RETRY_MS: "500",
  KEY_STATUS_CHAIN_TIMEOUT_MS: "300",
  INDEX_LAG_SAMPLE_MS: "500",
  INDEX_LAG_READY_MAX_SECONDS: "5",
  READY_CHECK_TIMEOUT_MS: "1000",
  ESCROW_UNSENT_GRACE_MS: "5000",
  WEBHOOK_RETRY_SCHEDULE_MS: "0,1000,2000,3000,4000",
};
