import type { Logger } from "pino";
import type { Backend } from "./backends/types.js";
import type { WorkerConfig } from "./config.js";
import type { ReceiptSigner } from "./issueReceipt.js";
import type { JobRegistry } from "./jobRegistry.js";

/** Everything a route needs, built once in `createWorkerApp`. */
export type WorkerContext = {
  config: WorkerConfig;
  /** The worker key: its address (ack, health) and its receipt signer. */
  signer: ReceiptSigner;
  backends: ReadonlyMap<string, Backend>;
  registry: JobRegistry;
  logger: Logger;
  /** Set on shutdown: no new jobs, `/readyz` answers 503. */
  draining: boolean;
};
