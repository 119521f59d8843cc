import { and, asc, desc, eq, gt, inArray, lt } from "@ponder/client";
import type { Hex } from "viem";
import { creditsToUsdg } from "@credit-metered/client";
import * as schema from "../../indexer/ponder.schema.js";
import type { WalletJob, WalletJobPage } from "@credit-metered/client/http";
import type { IndexClient } from "../readModel/indexClient.js";

export type { WalletJob } from "@credit-metered/client/http";

/** The API's job states (spec) and the index status each one is found under: the index knows chain outcomes only,
 * so a job still `processing` or `settling` for the gateway is `pending` there. */
export const INDEX_STATUS_OF = {
  pending: "pending",
  processing: "pending",
  settling: "pending",
  settled: "settled",
  failed: "failed",
  refunded: "refunded",
  disputed: "disputed",
} as const;

export interface WalletJobsQuery {
  limit: number;
  before?: string | undefined;
  after?: string | undefined;
  status?: keyof typeof INDEX_STATUS_OF | undefined;
  model?: string | undefined;
}

const iso = (seconds: bigint | null) => (seconds == null ? null : new Date(Number(seconds) * 1000).toISOString());
const num = (value: bigint | null) => (value == null ? null : Number(value));

/** The wallet's jobs from the index, newest first (jobs of every key the wallet ever had). */
export class WalletJobs {
  /** Each index read gives up after the client's deadline (503 `service_unavailable` through the error handler). */
  constructor(private readonly index: Pick<IndexClient, "bounded">) {}

  /**
   * One page of the wallet's jobs, newest first, paged and filtered like `GET /v1/jobs`: `before` walks back,
   * `after` returns the jobs just newer than the cursor; `next_cursor` continues in the same direction.
   */
  async page(wallet: string, options: WalletJobsQuery): Promise<Omit<WalletJobPage, "object">> {
    const conditions = [eq(schema.job.wallet, wallet.toLowerCase() as Hex)];
    if (options.before) conditions.push(lt(schema.job.id, options.before));
    if (options.after) conditions.push(gt(schema.job.id, options.after));
    if (options.model) conditions.push(eq(schema.job.modelId, options.model));
    if (options.status) conditions.push(eq(schema.job.status, INDEX_STATUS_OF[options.status]));
    const forward = options.after !== undefined && options.before === undefined;
    const rows = await this.index.bounded("wallet jobs from the index", (db) =>
      db
        .select()
        .from(schema.job)
        .where(and(...conditions))
        .orderBy(forward ? asc(schema.job.id) : desc(schema.job.id))
        .limit(options.limit + 1),
    );
    const hasMore = rows.length > options.limit;
    const page = rows.slice(0, options.limit);
    if (forward) page.reverse();
    const data = await this.describe(page);
    const cursor = forward ? data[0]?.id : data.at(-1)?.id;
    return { data, has_more: hasMore, next_cursor: hasMore ? (cursor ?? null) : null };
  }

  private async describe(jobs: (typeof schema.job.$inferSelect)[]): Promise<WalletJob[]> {
    const disputed = jobs.filter((job) => job.disputeTx != null).map((job) => job.jobKey);
    const disputes =
      disputed.length === 0
        ? []
        : await this.index.bounded("disputes from the index", (db) =>
            db.select().from(schema.dispute).where(inArray(schema.dispute.jobKey, disputed)),
          );
    const outcomeOf = new Map(disputes.map((row) => [row.jobKey, row.outcome]));
    return jobs.map((job) => ({
      id: job.id,
      job_key: job.jobKey,
      status: job.status,
      model: job.modelId,
      tier: job.tier,
      credits_locked: Number(job.creditsLocked),
      credits_charged: num(job.creditsCharged),
      credits_refunded: num(job.creditsRefunded),
      usdg_value: creditsToUsdg(job.creditsCharged ?? 0n),
      worker_address: job.worker,
      prompt_tokens: job.promptTokens,
      completion_tokens: job.completionTokens,
      proof_hash: job.outputHash,
      created_at: iso(job.createdAt)!,
      completed_at: iso(job.completedAt),
      escrow_tx: job.escrowTx,
      settlement_tx: job.settlementTx,
      refund_tx: job.refundTx,
      fail_tx: job.failTx,
      dispute_tx: job.disputeTx,
      dispute_outcome: outcomeOf.get(job.jobKey) ?? null,
    }));
  }
}
