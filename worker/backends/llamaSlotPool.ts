/**
 * A fixed set of slots (one llama.cpp context sequence each) handed out first come, first served. A job holds
 * one slot for its whole generation; jobs beyond the slot count wait in line, and leave the line when their
 * signal aborts.
 */
export class LlamaSlotPool<Slot> {
  private readonly free: Slot[];
  private readonly waiting: { resolve: (slot: Slot) => void }[] = [];

  constructor(slots: readonly Slot[]) {
    this.free = [...slots];
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal: AbortSignal): Promise<Slot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const slot = this.free.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<Slot>((resolve, reject) => {
      const waiter = {
        resolve: (granted: Slot) => {
          signal.removeEventListener("abort", onAbort);
          resolve(granted);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next.resolve(slot);
    else this.free.push(slot);
  }
}
