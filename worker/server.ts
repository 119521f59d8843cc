import express from "express";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Backend } from "./backends/types.js";
import type { WorkerConfig } from "./config.js";
import { gatewayAuth } from "./gatewayAuth.js";
import { receiptSignerOf } from "./issueReceipt.js";
import { JobRegistry } from "./jobRegistry.js";
import { workerMetrics } from "./metrics.js";
import { cancelJob } from "./routes/cancelJob.js";
import { getHealth, getReadiness } from "./routes/health.js";
import { postJob } from "./routes/postJob.js";
import { WorkerError } from "./workerError.js";
import type { WorkerContext } from "./workerContext.js";

function errorStatus(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "status" in error && typeof error.status === "number") {
    return error.status;
  }
  return undefined;
}

/** Express error middleware: the single place that turns errors into bodies; internals never leak. */
function errorHandler(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      // Mid-stream failures are reported in-band by streamJob; here the socket is all that is left to close.
      logger.error({ err: error }, "error after the response started");
      res.destroy();
      return;
    }
    let workerError: WorkerError;
    if (error instanceof WorkerError) workerError = error;
    else if (errorStatus(error) === 413) workerError = new WorkerError("payload_too_large", "the body is too large");
    else if (errorStatus(error) === 400) workerError = new WorkerError("invalid_request", "the body is not valid JSON");
    else {
      logger.error({ err: error }, "unhandled error");
      workerError = new WorkerError("internal_error", "internal worker error");
    }
    res.status(workerError.status).json(workerError.toBody());
    void next;
  };
}

export type WorkerApp = { app: express.Express; context: WorkerContext };

/** Builds the worker's HTTP app over its loaded backends (`createBackends`); `main.ts` listens on it, tests may too. */
export function createWorkerApp(
  config: WorkerConfig,
  logger: Logger,
  backends: ReadonlyMap<string, Backend>,
): WorkerApp {
  const context: WorkerContext = {
    config,
    signer: receiptSignerOf(config.privateKey),
    backends,
    registry: new JobRegistry(),
    logger,
    draining: false,
  };

  const app = express();
  app.disable("x-powered-by");
  app.get("/healthz", getHealth(context));
  app.get("/readyz", getReadiness(context));
  app.get("/metrics", async (_req: Request, res: Response) => {
    workerMetrics.inflight.set(context.registry.inflight());
    res.setHeader("content-type", workerMetrics.registry.contentType);
    res.send(await workerMetrics.registry.metrics());
  });

  const jobs = express.Router();
  // Authenticate before reading the body: strangers do not get to make the worker parse anything.
  jobs.use(gatewayAuth(config.gatewayToken));
  jobs.use(express.json({ limit: "4mb" }));
  jobs.post("/", postJob(context));
  jobs.post("/:job_id/cancel", cancelJob(context));
  app.use("/v1/jobs", jobs);

  app.use((_req: Request, _res: Response) => {
    throw new WorkerError("not_found", "no such route");
  });
  app.use(errorHandler(logger));
  return { app, context };
}
