import type { Hex } from "viem";
import type { ReceiptDomainParams } from "@credit-metered/client";

export type JobState = "running" | "done" | "failed" | "cancelled" | "disconnected";

/** What the worker remembers of a job: enough to sign a receipt for any prefix of what it emitted. */
export type JobRecord = {
  jobId: string;
  jobIdBytes32: Hex;
  escrow: ReceiptDomainParams;
  model: string;
  promptTokens: number;
  /** Token texts in emission order, and the unix second each was emitted. */
  tokens: string[];
  tokenAt: number[];
  acceptedAt: number;
  controller: AbortController;
  state: JobState;
};

/** Finished jobs stay answerable for cancel (late receipts) a while past the 120 s job timeout. */
export const FINISHED_JOB_RETENTION_MS = 180_000;

/** In-memory only: the worker is stateless across restarts; the escrow refunds anything a restart loses. */
export class JobRegistry {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #expiry = new Map<string, NodeJS.Timeout>();
  /**
   * Records added and not yet released: every running job is among them (release ends a record's run), so
   * `running()` scans these few rather than every job of the retention window (thousands under load, scanned on
   * each job request: 7% of a simulated worker's CPU at ~300 jobs/s).
   */
  readonly #live = new Set<JobRecord>();

  get(jobId: string): JobRecord | undefined {
    return this.#jobs.get(jobId);
  }

  add(record: JobRecord): void {
    clearTimeout(this.#expiry.get(record.jobId));
    this.#expiry.delete(record.jobId);
    this.#jobs.set(record.jobId, record);
    this.#live.add(record);
  }

  /** Marks the end of a job's stream; the record stays for late cancels, then goes. */
  release(record: JobRecord): void {
    if (record.state === "running") record.state = "failed";
    this.#live.delete(record);
    const timer = setTimeout(() => {
      if (this.#jobs.get(record.jobId) === record) this.#jobs.delete(record.jobId);
      this.#expiry.delete(record.jobId);
    }, FINISHED_JOB_RETENTION_MS);
    timer.unref();
    this.#expiry.set(record.jobId, timer);
  }

  running(): JobRecord[] {
    return [...this.#live].filter((record) => record.state === "running");
  }

  inflight(): number {
    let count = 0;
    for (const record of this.#live) if (record.state === "running") count += 1;
    return count;
  }
}
