import { waitFor } from "../../../scripts/stack/waitFor.js";

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
