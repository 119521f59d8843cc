import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { collectProcessMetrics } from "../shared/metrics/processMetrics.js";

/**
 * The worker's Prometheus metrics (`GET /metrics`): jobs by outcome, time to first token, tokens emitted;
 * in-flight jobs are read from the job registry at scrape time (`createWorkerApp`). One registry per process.
 */
export class WorkerMetrics {
  readonly registry = new Registry();

  readonly jobs = new Counter({
    name: "worker_jobs_total",
    help: "Jobs finished, by model and outcome (done, failed, cancelled, disconnected).",
    labelNames: ["model", "outcome"] as const,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new Histogram({
    name: "worker_time_to_first_token_seconds",
    help: "From the job request arriving to its first token written, by model.",
    labelNames: ["model"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly tokens = new Counter({
    name: "worker_tokens_total",
    help: "Tokens emitted, by model.",
    labelNames: ["model"] as const,
    registers: [this.registry],
  });

  /** Set at scrape time from the job registry. */
  readonly inflight = new Gauge({
    name: "worker_inflight_jobs",
    help: "Jobs the worker is running now.",
    registers: [this.registry],
  });

  constructor() {
    collectProcessMetrics(this.registry);
  }
}

export const workerMetrics = new WorkerMetrics();
