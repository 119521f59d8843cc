import perfHooks from "node:perf_hooks";

/**
 * How often an event-loop delay histogram (`nodejs_eventloop_lag_*`) samples, ms. prom-client's default, 10 ms, is a
 * timer that wakes an idle process 100 times a second; on the 2-core VMs we run on each wake-up of an idle Node
 * process costs 70–200 µs of CPU (a write to a loopback socket costs 16 µs back to back and 85 µs with a 1 ms pause
 * before each), so the histogram alone kept an idle worker at ~6 ms of CPU a second. At 50 ms a stall still shows
 * whole in the maximum (the timer fires that much late); only delays under 50 ms lose resolution, and the gateway
 * judges its own stalls by CPU time anyway (api/observability/loopCpuMonitor.ts).
 */
export const EVENT_LOOP_SAMPLE_MS = 50;

/** What `monitorEventLoopDelay` samples at when not told (Node's default). */
const NODE_DEFAULT_RESOLUTION_MS = 10;

/**
 * Importing this module makes every event-loop delay monitor in the process sample at most every
 * EVENT_LOOP_SAMPLE_MS. It exists for the indexer: Ponder asks prom-client for a 1 ms resolution
 * (`ponder/dist/esm/internal/metrics.js`, `eventLoopMonitoringPrecision: 1`), a native timer that woke an idle
 * indexer ~1,000 times a second (measured: 880 wake-ups/s; a process with such a monitor used 20 ms of CPU a second
 * idle, one sampling at 50 ms none measurable). Ponder offers no setting for it, so the indexer loads this file
 * before Ponder (`node --import`, scripts/stack/startIndexer.ts); prom-client looks `monitorEventLoopDelay` up when
 * it is called, so the wrapper is what it gets. It imports nothing of ours, so Node runs it by stripping its types.
 */
const original = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options?: perfHooks.EventLoopMonitorOptions) =>
  original({
    ...options,
    resolution: Math.max(options?.resolution ?? NODE_DEFAULT_RESOLUTION_MS, EVENT_LOOP_SAMPLE_MS),
  });
