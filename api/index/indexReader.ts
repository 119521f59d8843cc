import { and, asc, createClient, desc, eq, gt, gte, inArray, lt, type Client } from "@ponder/client";
import type { Hex } from "viem";
import * as schema from "../../indexer/ponder.schema.js";

export type IndexedJob = typeof schema.job.$inferSelect;
export type IndexedModel = typeof schema.model.$inferSelect;
export type IndexedAccount = typeof schema.account.$inferSelect;
export type IndexedWorker = typeof schema.worker.$inferSelect;
export type IndexedDispute = typeof schema.dispute.$inferSelect;

/** Read models of the chain, from the indexer over @ponder/client (SQL over HTTP). Never written by the gateway. */
export class IndexReader {
  private readonly client: Client<typeof schema>;

  constructor(indexerUrl: string) {
    this.client = createClient(`${indexerUrl.replace(/\/$/, "")}/sql`, { schema });
  }

  async listedModels(): Promise<IndexedModel[]> {
    return this.client.db
      .select()
      .from(schema.model)
      .where(eq(schema.model.retired, false))
      .orderBy(asc(schema.model.index));
  }

  async modelById(modelId: string): Promise<IndexedModel | undefined> {
    const rows = await this.client.db
      .select()
      .from(schema.model)
      .where(and(eq(schema.model.modelId, modelId), eq(schema.model.retired, false)))
      .limit(1);
    return rows[0];
  }

  /** Active workers and the model keys each registered. */
  async activeWorkers(): Promise<IndexedWorker[]> {
    return this.client.db.select().from(schema.worker).where(eq(schema.worker.status, "active"));
  }

  async jobById(jobId: string): Promise<IndexedJob | undefined> {
    const rows = await this.client.db.select().from(schema.job).where(eq(schema.job.id, jobId)).limit(1);
    return rows[0];
  }

  async jobsByIds(jobIds: readonly string[]): Promise<IndexedJob[]> {
    if (jobIds.length === 0) return [];
    return this.client.db
      .select()
      .from(schema.job)
      .where(inArray(schema.job.id, [...jobIds]));
  }

  /** Jobs of a key, newest first, strictly between the cursors. */
  async jobsForKey(
    keyHash: Hex,
    options: { before?: string; after?: string; model?: string; limit: number; order?: "asc" | "desc" },
  ): Promise<IndexedJob[]> {
    const conditions = [eq(schema.job.keyHash, keyHash.toLowerCase() as Hex)];
    if (options.before) conditions.push(lt(schema.job.id, options.before));
    if (options.after) conditions.push(gt(schema.job.id, options.after));
    if (options.model) conditions.push(eq(schema.job.modelId, options.model));
    return this.client.db
      .select()
      .from(schema.job)
      .where(and(...conditions))
      .orderBy(options.order === "asc" ? asc(schema.job.id) : desc(schema.job.id))
      .limit(options.limit);
  }

  /** Open jobs whose deadline passed before `nowSeconds` (the sweeper refunds them). */
  async expiredOpenJobs(nowSeconds: bigint, limit = 100): Promise<IndexedJob[]> {
    return this.client.db
      .select()
      .from(schema.job)
      .where(and(eq(schema.job.status, "pending"), lt(schema.job.deadline, nowSeconds)))
      .orderBy(asc(schema.job.deadline))
      .limit(limit);
  }

  async accountOf(wallet: Hex): Promise<IndexedAccount | undefined> {
    const rows = await this.client.db
      .select()
      .from(schema.account)
      .where(eq(schema.account.wallet, wallet.toLowerCase() as Hex))
      .limit(1);
    return rows[0];
  }

  async apiKey(keyHash: Hex): Promise<typeof schema.apiKey.$inferSelect | undefined> {
    const rows = await this.client.db
      .select()
      .from(schema.apiKey)
      .where(eq(schema.apiKey.keyHash, keyHash.toLowerCase() as Hex))
      .limit(1);
    return rows[0];
  }

  async disputeOf(jobKey: Hex): Promise<IndexedDispute | undefined> {
    const rows = await this.client.db
      .select()
      .from(schema.dispute)
      .where(eq(schema.dispute.jobKey, jobKey.toLowerCase() as Hex))
      .limit(1);
    return rows[0];
  }

  /** Disputes opened at or after `sinceSeconds` (chain time), with the model of their job (trust figures). */
  async disputesSince(sinceSeconds: bigint): Promise<{ modelId: string; outcome: string }[]> {
    return this.client.db
      .select({ modelId: schema.job.modelId, outcome: schema.dispute.outcome })
      .from(schema.dispute)
      .innerJoin(schema.job, eq(schema.job.jobKey, schema.dispute.jobKey))
      .where(gte(schema.dispute.openedAt, sinceSeconds));
  }

  /** Latest indexed block of the chain. */
  async indexedBlock(): Promise<number | undefined> {
    const status = await this.client.getStatus();
    const first = Object.values(status)[0];
    return first?.block.number;
  }
}
