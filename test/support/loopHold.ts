/** How long the gateway held its event loop in one stretch since the previous read, ms. */
export type LoopHold = {
  /**
   * Main-thread CPU time (`gateway_event_loop_busy_cpu_max_seconds`, api/observability/loopCpuMonitor.ts): the
   * gateway's own work, whatever else the machine runs. What a request is judged by.
   */
  cpuMs: number;
  /**
   * Wall-clock delay (`nodejs_eventloop_lag_max_seconds`, prom-client's `monitorEventLoopDelay`): adds the time the
   * host did not run the process, so on a shared, busy machine it measures the machine too. Reported only.
   */
  wallMs: number;
};

/**
 * Both measures of the gateway's longest event-loop stretch since the previous read: each is reset on every
 * `/metrics` scrape, so reading before and after a request bounds what that request held the loop for (plus whatever
 * else ran in the same window, which is why the runner replays a request before it blames it).
 */
export async function readLoopHold(apiUrl: string): Promise<LoopHold> {
  const response = await fetch(`${apiUrl}/metrics`, { signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  const read = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, "m").exec(text);
    if (!match) throw new Error(`the gateway's /metrics has no ${name}`);
    return Number(match[1]) * 1000;
  };
  return {
    cpuMs: read("gateway_event_loop_busy_cpu_max_seconds"),
    wallMs: read("nodejs_eventloop_lag_max_seconds"),
  };
}
