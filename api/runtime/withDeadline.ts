/** Thrown by `withDeadline` when the work did not finish in time. */
export class DeadlineExceededError extends Error {
  override name = "DeadlineExceededError";
}

/**
 * Resolves or rejects like `work`, or rejects with DeadlineExceededError after `ms`. For calls whose client takes
 * no abort signal (the work itself is abandoned, not cancelled), so callers never wait longer than `ms`.
 */
export async function withDeadline<T>(work: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([Promise.resolve(work), late]);
  } finally {
    clearTimeout(timer);
  }
}
