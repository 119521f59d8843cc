/** Calls `probe` until it returns true or `timeoutMs` passes; `isAlive` lets a dead child fail the wait at once. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  { timeoutMs, intervalMs = 100, isAlive }: { timeoutMs: number; intervalMs?: number; isAlive?: () => boolean },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (isAlive && !isAlive()) throw new Error(`${what}: the process exited before it was ready`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
