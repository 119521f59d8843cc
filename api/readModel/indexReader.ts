import { and, asc, desc, eq, gt, gte, inArray, lt } from "@ponder/client";
import type { Hex } from "viem";
import * as schema from "../../indexer/ponder.schema.js";
import type { IndexClient, IndexDb } from "./indexClient.js";
import { LastKnown } from "./lastKnown.js";

export type IndexedJob = typeof schema.job.$inferSelect;
export type IndexedModel = typeof schema.model.$inferSelect;
export type IndexedAccount = typeof schema.account.$inferSelect;
export type IndexedWorker = typeof schema.worker.$inferSelect;
export type IndexedDispute = typeof schema.dispute.$inferSelect;

/**
 * Read models of the chain, from the indexer through the gateway's one `IndexClient` (deadlines, fail-fast while
 * the index is away). Never written by the gateway. Keeps the rows last read, so callers can answer from the last
 * known state while the index is away.
 */
export class IndexReader {
  /** Rows last read, for answering from the last known state while the index is away. */
  private readonly lastJobs = new LastKnown<string, IndexedJob>();
  private readonly lastAccounts = new LastKnown<string, IndexedAccount>();

  constructor(private readonly client: IndexClient) {}

  /** Since when reads fail (ms since epoch), or undefined while the index answers. */
  get unavailableSince(): number | undefined {
    return this.client.unavailableSince;
  }

  /** The job row last read from the index (and its age), if read within `maxAgeMs`. */
  lastKnownJob(jobId: string, maxAgeMs: number): { row: IndexedJob; ageMs: number } | undefined {
    const found = this.lastJobs.recall(jobId, maxAgeMs);
    return found && { row: found.value, ageMs: found.ageMs };
  }

  /** The account row last read from the index (and its age), if read within `maxAgeMs`. */
  lastKnownAccount(wallet: Hex, maxAgeMs: number): { row: IndexedAccount; ageMs: number } | undefined {
    const found = this.lastAccounts.recall(wallet.toLowerCase(), maxAgeMs);
    return found && { row: found.value, ageMs: found.ageMs };
  }

  private rememberJobs(rows: IndexedJob[]): IndexedJob[] {
    for (const row of rows) this.lastJobs.remember(row.id, row);
    return rows;
  }

  private read<T>(what: string, query: (db: IndexDb) => PromiseLike<T>): Promise<T> {
    return this.client.read(what, query);
  }

  async listedModels(): Promise<IndexedModel[]> {
    return this.read("listedModels", (db) =>
      db.select().from(schema.model).where(eq(schema.model.retired, false)).orderBy(asc(schema.model.index)),
    );
  }

  async modelById(modelId: string): Promise<IndexedModel | undefined> {
    const rows = await this.read("modelById", (db) =>
      db
        .select()
        .from(schema.model)
        .where(and(eq(schema.model.modelId, modelId), eq(schema.model.retired, false)))
        .limit(1),
    );
    return rows[0];
  }

  /** Active workers and the model keys each registered. */
  async activeWorkers(): Promise<IndexedWorker[]> {
    return this.read("activeWorkers", (db) =>
      db.select().from(schema.worker).where(eq(schema.worker.status, "active")),
    );
  }

  async jobById(jobId: string): Promise<IndexedJob | undefined> {
    const rows = await this.read("jobById", (db) =>
      db.select().from(schema.job).where(eq(schema.job.id, jobId)).limit(1),
    );
    return this.rememberJobs(rows)[0];
  }

  async jobsByIds(jobIds: readonly string[]): Promise<IndexedJob[]> {
    if (jobIds.length === 0) return [];
    return this.rememberJobs(
      await this.read("jobsByIds", (db) =>
        db
          .select()
          .from(schema.job)
          .where(inArray(schema.job.id, [...jobIds])),
      ),
    );
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
    return this.rememberJobs(
      await this.read("jobsForKey", (db) =>
        db
          .select()
          .from(schema.job)
          .where(and(...conditions))
          .orderBy(options.order === "asc" ? asc(schema.job.id) : desc(schema.job.id))
          .limit(options.limit),
      ),
    );
  }

  /** Open jobs whose deadline passed before `nowSeconds` (the sweeper refunds them). */
  async expiredOpenJobs(nowSeconds: bigint, limit = 100): Promise<IndexedJob[]> {
    return this.read("expiredOpenJobs", (db) =>
      db
        .select()
        .from(schema.job)
        .where(and(eq(schema.job.status, "pending"), lt(schema.job.deadline, nowSeconds)))
        .orderBy(asc(schema.job.deadline))
        .limit(limit),
    );
  }

  /** Open jobs locked (block time) before `lockedBefore` whose deadline has not passed `nowSeconds`, oldest first. */
  async openJobsLockedBefore(lockedBefore: bigint, nowSeconds: bigint, limit = 100): Promise<IndexedJob[]> {
    return this.read("openJobsLockedBefore", (db) =>
      db
        .select()
        .from(schema.job)
        .where(
          and(
            eq(schema.job.status, "pending"),
            lt(schema.job.createdAt, lockedBefore),
            gte(schema.job.deadline, nowSeconds),
          ),
        )
        .orderBy(asc(schema.job.createdAt))
        .limit(limit),
    );
  }

  async accountOf(wallet: Hex): Promise<IndexedAccount | undefined> {
    const rows = await this.read("accountOf", (db) =>
      db
        .select()
        .from(schema.account)
        .where(eq(schema.account.wallet, wallet.toLowerCase() as Hex))
        .limit(1),
    );
    if (rows[0]) this.lastAccounts.remember(wallet.toLowerCase(), rows[0]);
    return rows[0];
  }

  async apiKey(keyHash: Hex): Promise<typeof schema.apiKey.$inferSelect | undefined> {
    const rows = await this.read("apiKey", (db) =>
      db
        .select()
        .from(schema.apiKey)
        .where(eq(schema.apiKey.keyHash, keyHash.toLowerCase() as Hex))
        .limit(1),
    );
    return rows[0];
  }

  async disputeOf(jobKey: Hex): Promise<IndexedDispute | undefined> {
    const rows = await this.read("disputeOf", (db) =>
      db
        .select()
        .from(schema.dispute)
        .where(eq(schema.dispute.jobKey, jobKey.toLowerCase() as Hex))
        .limit(1),
    );
    return rows[0];
  }

  /** Disputes opened at or after `sinceSeconds` (chain time), with the model of their job (trust figures). */
  async disputesSince(sinceSeconds: bigint): Promise<{ modelId: string; outcome: string }[]> {
    return this.read("disputesSince", (db) =>
      db
        .select({ modelId: schema.job.modelId, outcome: schema.dispute.outcome })
        .from(schema.dispute)
        .innerJoin(schema.job, eq(schema.job.jobKey, schema.dispute.jobKey))
        .where(gte(schema.dispute.openedAt, sinceSeconds)),
    );
  }

  /** Latest indexed block of the chain (number and unix timestamp). */
  async indexedBlock(): Promise<{ number: number; timestamp: number } | undefined> {
    const status = await this.client.status();
    const first = Object.values(status)[0];
    return first?.block ? { number: first.block.number, timestamp: first.block.timestamp } : undefined;
  }
}
