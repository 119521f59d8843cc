import { once } from "node:events";
import { pino } from "pino";
import { ConfigError, loadConfig } from "./config.js";
import type { WorkerConfig } from "./config.js";
import { createBackends } from "./backends/createBackend.js";
import { LlamaLoadError } from "./backends/llama.js";
import type { Backend } from "./backends/types.js";
import { createWorkerApp } from "./server.js";
import { warmUpCounting } from "../shared/tokens/countChatTokens.js";
import { secp256k1Backend } from "@credit-metered/client/node";

/** How long running jobs may take to finish after SIGTERM before they are aborted. */
const SHUTDOWN_GRACE_MS = 10_000;

function readConfig(): WorkerConfig {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Loads every model before listening, so a worker that answers probes can run jobs. */
async function loadBackends(): Promise<Map<string, Backend>> {
  try {
    return await createBackends(config.models);
  } catch (error) {
    if (error instanceof LlamaLoadError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const config = readConfig();
const logger = pino({ name: "worker", level: config.logLevel });
// The token counter is built and its long-prompt path compiled now, not while the first job waits.
await warmUpCounting();
const { app, context } = createWorkerApp(config, logger, await loadBackends());
const server = app.listen(config.port, config.host);
await once(server, "listening");
logger.info(
  {
    address: context.signer.address,
    url: `http://${config.host}:${config.port}`,
    models: Object.fromEntries(Object.entries(config.models).map(([id, model]) => [id, model.backend])),
    fault: config.fault,
    // Receipts are signed by libsecp256k1 ("native") where its binding loads, else by @noble/curves ("js").
    secp256k1: secp256k1Backend,
  },
  "worker listening",
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  context.draining = true;
  logger.info({ signal, inflight: context.registry.inflight() }, "draining");
  // Keep listening while jobs finish: probes then see 503 draining and new jobs get worker_draining,
  // which the gateway reads as "route elsewhere", rather than a refused connection.
  const deadline = Date.now() + SHUTDOWN_GRACE_MS;
  while (context.registry.inflight() > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const record of context.registry.running()) record.controller.abort(new Error("the worker is shutting down"));
  server.close();
  server.closeAllConnections();
  logger.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
