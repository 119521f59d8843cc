import type pg from "pg";
import type { Hex } from "viem";
import type { JobState } from "@credit-metered/client";
import type { Receipt } from "../chain/receiptTypes.js";

/** The gateway's own job rows use the Job resource's statuses. */
export type GatewayJobStatus = JobState;

export interface GatewayJobRow {
  job_id: string;
  job_key: string;
  wallet: string;
  key_hash: string;
  model: string;
  tier: string;
  status: GatewayJobStatus;
  stream: boolean;
  max_tokens: number;
  credits_locked: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  credits_charged: string | null;
  worker: string | null;
  escrow_tx: string | null;
  deadline: string | null;
  processing_at: Date | null;
  receipt: Receipt | null;
  signature: string | null;
  output_hash: string | null;
  final_token_at: string | null;
  settlement_tx: string | null;
  settlement_block: string | null;
  fail_tx: string | null;
  refund_tx: string | null;
  timed_out: boolean;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  first_token_ms?: number | null;
}

export interface NewGatewayJob {
  jobId: string;
  jobKey: Hex;
  wallet: Hex;
  keyHash: Hex;
  model: string;
  tier: string;
  stream: boolean;
  maxTokens: number;
  creditsLocked: number;
  promptTokens: number;
}

/** Columns besides `status`, which only jobLifecycle.ts changes (through `transition`). */
export type JobPatch = Partial<{
  worker: string;
  escrow_tx: string;
  deadline: bigint;
  processing_at: Date;
  receipt: Receipt;
  signature: string;
  output_hash: string;
  final_token_at: number;
  prompt_tokens: number;
  completion_tokens: number;
  credits_charged: bigint;
  settlement_tx: string;
  settlement_block: bigint;
  fail_tx: string;
  refund_tx: string;
  timed_out: boolean;
  error: string;
  completed_at: Date;
  first_token_ms: number;
}>;

/** The gateway_job table (db/migrations/001_gateway_jobs.sql). */
export class JobStore {
  constructor(private readonly pool: pg.Pool) {}

  async insert(job: NewGatewayJob): Promise<void> {
    await this.pool.query(
      `INSERT INTO gateway_job (job_id, job_key, wallet, key_hash, model, tier, status, stream, max_tokens, credits_locked, prompt_tokens)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10)`,
      [
        job.jobId,
        job.jobKey,
        job.wallet.toLowerCase(),
        job.keyHash.toLowerCase(),
        job.model,
        job.tier,
        job.stream,
        job.maxTokens,
        job.creditsLocked,
        job.promptTokens,
      ],
    );
  }

  /** Records facts of a job; never its status (jobLifecycle.ts owns that). */
  async update(jobId: string, patch: JobPatch & { status?: never }): Promise<void> {
    if ("status" in patch) throw new Error("gateway_job.status changes only through jobLifecycle.ts");
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    if (entries.length === 0) return;
    const sets = entries.map(([column], i) => `${column} = $${i + 2}`);
    const values = entries.map(([column, value]) =>
      column === "receipt" ? JSON.stringify(value) : typeof value === "bigint" ? value.toString() : value,
    );
    await this.pool.query(`UPDATE gateway_job SET ${sets.join(", ")}, updated_at = now() WHERE job_id = $1`, [
      jobId,
      ...values,
    ]);
  }

  /**
   * Compare-and-set of the status: moves to `status` only from one of `from`; false when the row was elsewhere.
   * Only jobLifecycle.ts calls it (the transition table lives there).
   */
  async transition(
    jobId: string,
    from: GatewayJobStatus[],
    status: GatewayJobStatus,
    patch: JobPatch = {},
  ): Promise<boolean> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    const sets = entries.map(([column], i) => `${column} = $${i + 4}`);
    const values = entries.map(([column, value]) =>
      column === "receipt" ? JSON.stringify(value) : typeof value === "bigint" ? value.toString() : value,
    );
    const result = await this.pool.query(
      `UPDATE gateway_job SET status = $2, ${[...sets, "updated_at = now()"].join(", ")} WHERE job_id = $1 AND status = ANY($3)`,
      [jobId, status, from, ...values],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Claims a retry of a row left in `status`: touches `updated_at` only if nobody did for `olderThanMs`, so of
   * several processes sweeping the same row one retries it.
   */
  async claimStale(jobId: string, status: GatewayJobStatus, olderThanMs: number): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE gateway_job SET updated_at = now()
       WHERE job_id = $1 AND status = $2 AND updated_at <= now() - make_interval(secs => $3::double precision / 1000)`,
      [jobId, status, olderThanMs],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async get(jobId: string): Promise<GatewayJobRow | undefined> {
    const result = await this.pool.query<GatewayJobRow>("SELECT * FROM gateway_job WHERE job_id = $1", [jobId]);
    return result.rows[0];
  }

  /** Jobs of a key, newest first, strictly between the cursors. */
  async listForKey(
    keyHash: Hex,
    options: { before?: string; after?: string; model?: string; limit: number; order?: "asc" | "desc" },
  ): Promise<GatewayJobRow[]> {
    // Rows whose escrow was never sent (openJob refused) are not jobs.
    const where = ["key_hash = $1", "escrow_tx IS NOT NULL"];
    const values: unknown[] = [keyHash.toLowerCase()];
    if (options.before) {
      values.push(options.before);
      where.push(`job_id < $${values.length}`);
    }
    if (options.after) {
      values.push(options.after);
      where.push(`job_id > $${values.length}`);
    }
    if (options.model) {
      values.push(options.model);
      where.push(`model = $${values.length}`);
    }
    values.push(options.limit);
    const result = await this.pool.query<GatewayJobRow>(
      `SELECT * FROM gateway_job WHERE ${where.join(" AND ")} ORDER BY job_id ${options.order === "asc" ? "ASC" : "DESC"} LIMIT $${values.length}`,
      values,
    );
    return result.rows;
  }

  /** Jobs not yet final (recovery and the sweeper). */
  async listOpen(): Promise<GatewayJobRow[]> {
    const result = await this.pool.query<GatewayJobRow>(
      "SELECT * FROM gateway_job WHERE status IN ('pending', 'processing', 'settling') ORDER BY job_id",
    );
    return result.rows;
  }
}
