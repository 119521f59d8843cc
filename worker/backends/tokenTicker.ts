/**
 * One timer for every simulated job's next token, instead of a `setTimeout` and an abort listener per token.
 *
 * A job's pacer (`ticker.pacer(signal)`) waits until a due time on the `performance.now()` clock; the ticker keeps
 * the waits in a heap by due time and arms a single timer for the earliest. When it fires, every wait then due is
 * released in due order (earlier registration first among equal times), and the timer is armed for the next. Node's
 * timers count whole milliseconds from the event loop's cached clock, so a timer of its own fired up to about a
 * millisecond before or after its due time; the ticker releases, when it fires, every wait due within the next
 * `RELEASE_AHEAD_MS` as well, the same slack (holding those for another timer would make them about 1 ms late on
 * average: the bench's direct time to first token rose by ~2 ms at p50 without it). A pacer listens for its signal once for the whole job: an abort drops its wait
 * from the heap and rejects it with the signal's reason at once.
 */

/** Waits due this soon after the ticker fires are released with the due ones (see above). */
export const RELEASE_AHEAD_MS = 1;

type Wait = { at: number; order: number; release: () => void; dropped: boolean };

/** Waits of one job, one at a time. */
export type Pacer = {
  /** Resolves at `at` (a `performance.now()` time; at the next tick if that has passed); rejects on abort. */
  until(at: number): Promise<void>;
  /** Stops listening to the signal and drops a pending wait (its promise then never settles). */
  close(): void;
};

function earlier(a: Wait, b: Wait): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order);
}

export class TokenTicker {
  readonly #heap: Wait[] = [];
  #order = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The due time the timer is armed for (Infinity when it is not). */
  #armedFor = Infinity;

  /** Waits not yet released or dropped (for tests). */
  pending(): number {
    return this.#heap.filter((wait) => !wait.dropped).length;
  }

  pacer(signal: AbortSignal): Pacer {
    let current: { wait: Wait; reject: (reason: unknown) => void } | undefined;
    const onAbort = () => {
      if (!current) return;
      current.wait.dropped = true;
      current.reject(signal.reason);
      current = undefined;
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return {
      until: (at) => {
        if (signal.aborted) return Promise.reject(signal.reason as Error);
        return new Promise<void>((resolve, reject) => {
          const wait: Wait = {
            at,
            order: this.#order++,
            dropped: false,
            release: () => {
              current = undefined;
              resolve();
            },
          };
          current = { wait, reject };
          this.#push(wait);
        });
      },
      close: () => {
        signal.removeEventListener("abort", onAbort);
        if (current) current.wait.dropped = true;
        current = undefined;
      },
    };
  }

  #push(wait: Wait): void {
    const heap = this.#heap;
    heap.push(wait);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(wait, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = wait;
    if (wait.at < this.#armedFor) this.#arm(wait.at);
  }

  #pop(): Wait {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && earlier(heap[right]!, heap[left]!) ? right : left;
        if (!earlier(heap[child]!, last)) break;
        heap[index] = heap[child]!;
        index = child;
      }
      heap[index] = last;
    }
    return top;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = setTimeout(this.#fire, Math.max(0, at - performance.now()));
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const horizon = performance.now() + RELEASE_AHEAD_MS;
    const heap = this.#heap;
    while (heap.length > 0 && (heap[0]!.dropped || heap[0]!.at <= horizon)) {
      const wait = this.#pop();
      if (!wait.dropped) wait.release();
    }
    // Dropped waits left inside the heap go when they reach the top; none is ever armed for on its own.
    while (heap.length > 0 && heap[0]!.dropped) this.#pop();
    if (heap.length > 0) this.#arm(heap[0]!.at);
  };
}
