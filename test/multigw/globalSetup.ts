import { stackGlobalSetup } from "../support/stackGlobalSetup.js";
import {
  MULTIGW_CHAIN_BLOCK_TIME,
  MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS,
  MULTIGW_GATEWAYS,
  MULTIGW_GATEWAY_ENV,
  MULTIGW_STATE_DIR,
  MULTIGW_WORKER_DEFAULTS,
  multigwPorts,
} from "./multigwStack.js";

/**
 * One whole stack with two gateway processes behind the stack's proxy (`GATEWAYS=2` of `npm start`) on a chain
 * mining a block every second (`CHAIN_BLOCK_TIME=1`).
 */
export const { setup, teardown } = stackGlobalSetup({
  label: "multigw stack",
  stateDir: MULTIGW_STATE_DIR,
  ports: multigwPorts,
  gateways: MULTIGW_GATEWAYS,
  ...(MULTIGW_CHAIN_BLOCK_TIME > 0 ? { chainBlockTime: MULTIGW_CHAIN_BLOCK_TIME } : {}),
  jobTimeoutSeconds: MULTIGW_CHAIN_JOB_TIMEOUT_SECONDS,
  gatewayEnv: MULTIGW_GATEWAY_ENV,
  workerDefaults: MULTIGW_WORKER_DEFAULTS,
  buildWeb: false,
});
