/**
 * Calls `probe` until it returns true or `timeoutMs` passes; `isAlive` lets a dead child fail the wait at once.
 * A probe that throws counts as "not ready"; the last such error is named in the timeout error, so a service that
 * answers wrongly (e.g. 429) is told apart from one that never answers.
 */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  { timeoutMs, intervalMs = 100, isAlive }: { timeoutMs: number; intervalMs?: number; isAlive?: () => boolean },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let lastFailure = "the probe answered not ready";
  for (;;) {
    if (isAlive && !isAlive()) throw new Error(`${what}: the process exited before it was ready`);
    attempts += 1;
    try {
      if (await probe()) return;
      lastFailure = "the probe answered not ready";
    } catch (error) {
      lastFailure = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not ready after ${timeoutMs} ms (${attempts} probes; last: ${lastFailure})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
