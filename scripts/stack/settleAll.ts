/**
 * Like Promise.all, but rejects only once every promise has settled: when one step of a parallel start fails, the
 * caller's clean-up (stopping processes, the chain) must not race the steps still running.
 */
export async function settleAll(promises: readonly (Promise<unknown> | undefined)[]): Promise<void> {
  const failure = (await Promise.allSettled(promises)).find((result) => result.status === "rejected");
  if (failure) throw failure.reason;
}
