import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts } from "../../scripts/stack/startLocalStack.js";

/**
 * The end-to-end suite's own stack: its own state folder and ports (8720–8739; `npm start` by hand uses
 * another base), and a short job timeout so `job_timeout` is observable in seconds instead of 120.
 */
export const TEST_PORT_BASE = Number(process.env.TEST_STACK_PORT_BASE ?? 8720);
export const TEST_STATE_DIR = path.join(repoRoot, ".local", "test-api");
export const TEST_JOB_TIMEOUT_MS = 8_000;
export const testPorts = stackPorts(TEST_PORT_BASE);
/** Ports for workers a test starts itself: after the pool's four workers. */
export const EXTRA_PORTS = { from: TEST_PORT_BASE + 9, to: TEST_PORT_BASE + 16 };
/**
 * Ports for gateways a test starts itself, never used by a worker: a stopped worker stays registered on chain, so
 * the main gateway keeps probing its endpoint every few seconds, and a gateway on that port would receive those
 * probes, which count against its per-IP burst limit (a limit of 5 was used up before its own readiness probe).
 */
export const EXTRA_GATEWAY_PORTS = { from: TEST_PORT_BASE + 17, to: TEST_PORT_BASE + 19 };
