import path from "node:path";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { stackPorts, type StackPorts } from "../../scripts/stack/startLocalStack.js";

/**
 * The end-to-end suite's own stack: its own state folder and ports (8720–8739; `npm start` by hand uses
 * another base), and a short job timeout so `job_timeout` is observable in seconds instead of 120.
 */
export const TEST_PORT_BASE = Number(process.env.TEST_STACK_PORT_BASE ?? 8720);
export const TEST_STATE_DIR = path.join(repoRoot, ".local", "test-api");
export const TEST_JOB_TIMEOUT_MS = 8_000;
export const testPorts = stackPorts(TEST_PORT_BASE);
/**
 * Ports for workers a test starts itself on the stack with these ports: after the pool's four workers, inside the
 * stack's own block of ports. Each suite's stack has its own block, since suites run at once (scripts/runSuites.ts):
 * with one range for every suite, two suites could each find the same port free before either worker had bound it.
 */
export function extraWorkerPorts(ports: StackPorts): { from: number; to: number } {
  return { from: ports.rpc + 9, to: ports.rpc + 16 };
}
/** The end-to-end suite's extra worker ports. */
export const EXTRA_PORTS = extraWorkerPorts(testPorts);
/**
 * Ports for gateways a test starts itself, never used by a worker: a stopped worker stays registered on chain, so
 * the main gateway keeps probing its endpoint every few seconds, and a gateway on that port would receive those
 * probes, which count against its per-IP burst limit (a limit of 5 was used up before its own readiness probe).
 */
export const EXTRA_GATEWAY_PORTS = { from: TEST_PORT_BASE + 17, to: TEST_PORT_BASE + 19 };
