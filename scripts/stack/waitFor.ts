/** How long and how often `waitFor` probes. */
export type WaitForOptions = {
  /** Default 20 s. */
  timeoutMs?: number;
  /** Pause between probes; default 100 ms. */
  intervalMs?: number;
  /** A process the wait is for: once it has exited, the wait fails at once instead of at the timeout. */
  isAlive?: () => boolean;
};

/**
 * The one polling helper (the stack's start-up and every test suite use it): calls `probe` until it returns a value
 * other than `false` or `undefined`, and returns that value (`true` for a yes/no probe). A probe that throws counts
 * as "not ready"; the last such error is named in the timeout error, so a service that answers wrongly (e.g. 429) is
 * told apart from one that never answers.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | false | undefined | Promise<T | false | undefined>,
  { timeoutMs = 20_000, intervalMs = 100, isAlive }: WaitForOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let lastFailure = "the probe answered not ready";
  for (;;) {
    if (isAlive && !isAlive()) throw new Error(`${what}: the process exited before it was ready`);
    attempts += 1;
    try {
      const value = await probe();
      if (value !== false && value !== undefined) return value;
      lastFailure = "the probe answered not ready";
    } catch (error) {
      lastFailure = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not ready after ${timeoutMs} ms (${attempts} probes; last: ${lastFailure})`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
