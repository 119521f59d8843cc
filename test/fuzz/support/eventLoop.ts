import { waitFor } from "../../../scripts/stack/waitFor.js";

/**
 * The gateway's worst event-loop delay since the previous read, in ms: prom-client's default metrics keep a
 * `perf_hooks.monitorEventLoopDelay` histogram and reset it on every `/metrics` scrape, so reading before and after
 * a request bounds what that request held the loop for (plus whatever else ran in the same window, which is why
 * the runner replays a request before it blames it).
 */
export async function readEventLoopMaxMs(apiUrl: string): Promise<number> {
  const response = await fetch(`${apiUrl}/metrics`, { signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  const match = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.eE+-]+)$/m.exec(text);
  if (!match) throw new Error("the gateway's /metrics has no nodejs_eventloop_lag_max_seconds");
  return Number(match[1]) * 1000;
}

/** Waits until `/healthz` answers again (after a request that timed out), up to `timeoutMs`; false if it never did. */
export async function waitForHealthy(apiUrl: string, timeoutMs: number): Promise<boolean> {
  return waitFor(
    "the gateway's /healthz",
    async () => (await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(5_000) })).status === 200,
    { timeoutMs, intervalMs: 500 },
  ).catch(() => false);
}

/**
 * Pings `/healthz` every `intervalMs` while the fuzzer runs and keeps the worst latency: what any other client saw
 * while the fuzzer's requests were served (measured from the test process, so it includes its own scheduling).
 */
export function startHealthSampler(
  apiUrl: string,
  intervalMs = 100,
): { stop: () => Promise<{ worstMs: number; samples: number }> } {
  let worstMs = 0;
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(60_000) });
        worstMs = Math.max(worstMs, performance.now() - started);
        samples++;
      } catch {
        worstMs = Math.max(worstMs, performance.now() - started);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { worstMs, samples };
    },
  };
}
