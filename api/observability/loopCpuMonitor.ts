/** How often the monitor samples the main thread's CPU clock: the resolution of what it reports. */
export const LOOP_CPU_SAMPLE_MS = 10;

/**
 * The most CPU time the main thread spent between two turns of the event loop, since the last read: how long the
 * process itself held the loop. `monitorEventLoopDelay` (prom-client's `nodejs_eventloop_lag_*`) measures the same
 * stretch in wall-clock time, which also counts the time the host did not schedule the thread at all; on a machine
 * shared with other work that part can be most of it, so a wall-clock figure cannot tell a slow request from a busy
 * host. This one counts only work done on the thread (JavaScript, parsing, and the pauses of garbage collection).
 */
export class LoopCpuMonitor {
  private last = threadCpuMs();
  private maxMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(sampleMs = LOOP_CPU_SAMPLE_MS) {
    this.timer = setInterval(() => {
      const now = threadCpuMs();
      this.maxMs = Math.max(this.maxMs, now - this.last);
      this.last = now;
    }, sampleMs);
    this.timer.unref();
  }

  /** The longest stretch since the previous call, in ms of the main thread's CPU; starts a new window. */
  takeMaxMs(): number {
    const now = threadCpuMs();
    const max = Math.max(this.maxMs, now - this.last);
    this.maxMs = 0;
    this.last = now;
    return max;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
