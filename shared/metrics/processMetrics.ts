import { collectDefaultMetrics, type Registry } from "prom-client";

/**
 * How often the event-loop delay histogram (`nodejs_eventloop_lag_*`) samples, ms. prom-client's default, 10 ms, is a
 * timer that wakes an idle process 100 times a second; on the 2-core VMs we run on each wake-up of an idle Node
 * process costs 70–200 µs of CPU (a write to a loopback socket costs 16 µs back to back and 85 µs with a 1 ms pause
 * before each), so the histogram alone kept an idle worker at ~6 ms of CPU a second. At 50 ms a stall still shows
 * whole in the maximum (the timer fires that much late); only delays under 50 ms lose resolution, and the gateway
 * judges its own stalls by CPU time anyway (api/observability/loopCpuMonitor.ts).
 */
export const EVENT_LOOP_SAMPLE_MS = 50;

/** Node's process metrics (CPU, memory, GC, handles, event-loop delay) into `registry`, for the gateway and the worker. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}
