import { rmSync } from "node:fs";
import path from "node:path";
import { stackGlobalSetup } from "../support/stackGlobalSetup.js";
import {
  CHAOS_CHAIN_JOB_TIMEOUT_SECONDS,
  CHAOS_GATEWAY_ENV,
  CHAOS_STATE_DIR,
  CHAOS_WORKER_DEFAULTS,
  chaosPorts,
} from "./chaosStack.js";

/** One whole stack for the chaos run; the tests signal, kill and restart its processes. */
export const { setup, teardown } = stackGlobalSetup({
  label: "chaos stack",
  // Process ids an earlier run recorded for its restarts (test/chaos/support/faults.ts) mean nothing now.
  beforeStart: () => rmSync(path.join(CHAOS_STATE_DIR, "chaos-pids.json"), { force: true }),
  stateDir: CHAOS_STATE_DIR,
  ports: chaosPorts,
  jobTimeoutSeconds: CHAOS_CHAIN_JOB_TIMEOUT_SECONDS,
  gatewayEnv: CHAOS_GATEWAY_ENV,
  workerDefaults: CHAOS_WORKER_DEFAULTS,
  buildWeb: false,
});
