import { collectDefaultMetrics, type Registry } from "prom-client";
import { EVENT_LOOP_SAMPLE_MS } from "./eventLoopSampling.js";

/** Node's process metrics (CPU, memory, GC, handles, event-loop delay) into `registry`, for the gateway and the worker. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}
