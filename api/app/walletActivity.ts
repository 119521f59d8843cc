import { and, count, eq, gte, sql, sum } from "@ponder/client";
import type pg from "pg";
import type { Hex } from "viem";
import * as schema from "../../indexer/ponder.schema.js";
import type { ActivityDay, WalletActivity as WalletActivityReport } from "@credit-metered/client/http";
import type { IndexClient } from "../readModel/indexClient.js";

const DAY_SECONDS = 86_400;
/** Outcomes whose charge stands (an upheld dispute shows `refunded`: its charge came back). */
const CHARGED_STATUSES = new Set(["settled", "disputed"]);

export type { ActivityDay, WalletActivity as WalletActivityReport } from "@credit-metered/client/http";

interface IndexRow {
  day: number | string;
  modelId: string;
  status: string;
  jobs: number | string;
  creditsCharged: string | number | null;
  promptTokens: string | number | null;
  completionTokens: string | number | null;
}

const isoDay = (day: number) => new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10);

/**
 * The wallet's activity over its last `days` UTC days, for the web app's charts: charges, tokens and outcomes from
 * the index (the chain's facts, aggregated by the index's SQL), time to first token from `gateway_job`.
 */
export class WalletActivity {
  constructor(
    private readonly index: Pick<IndexClient, "db">,
    private readonly pool: pg.Pool,
  ) {}

  async report(wallet: string, days: number, now = Date.now()): Promise<WalletActivityReport> {
    const today = Math.floor(now / 1000 / DAY_SECONDS);
    const firstDay = today - days + 1;
    const lower = wallet.toLowerCase() as Hex;
    // The divisor is inlined: a bound parameter would make the SELECT and GROUP BY expressions differ ($1 vs $2).
    const dayExpr = sql<number>`floor(${schema.job.createdAt} / ${sql.raw(String(DAY_SECONDS))})`;
    const [rows, ttft] = await Promise.all([
      this.index.db
        // Every aggregate is named: the index answers rows keyed by column name, and three bare `sum`s collide.
        .select({
          day: dayExpr.as("day"),
          modelId: schema.job.modelId,
          status: schema.job.status,
          jobs: count().as("jobs"),
          creditsCharged: sum(schema.job.creditsCharged).as("credits_charged"),
          promptTokens: sum(schema.job.promptTokens).as("prompt_tokens"),
          completionTokens: sum(schema.job.completionTokens).as("completion_tokens"),
        })
        .from(schema.job)
        .where(and(eq(schema.job.wallet, lower), gte(schema.job.createdAt, BigInt(firstDay * DAY_SECONDS))))
        .groupBy(dayExpr, schema.job.modelId, schema.job.status) as Promise<IndexRow[]>,
      this.pool.query<{ day: number; jobs: string; p50: number; p95: number }>(
        `SELECT floor(extract(epoch FROM created_at) / ${DAY_SECONDS})::int AS day,
                count(*) AS jobs,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY first_token_ms) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY first_token_ms) AS p95
           FROM gateway_job
          WHERE wallet = $1 AND first_token_ms IS NOT NULL AND created_at >= to_timestamp($2)
          GROUP BY 1 ORDER BY 1`,
        [lower, firstDay * DAY_SECONDS],
      ),
    ]);

    const byDay = new Map<number, ActivityDay>();
    for (let day = firstDay; day <= today; day++) {
      byDay.set(day, {
        date: isoDay(day),
        jobs: 0,
        credits_charged: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        credits_by_model: {},
      });
    }
    const byModel = new Map<string, WalletActivityReport["by_model"][number]>();
    const byOutcome = new Map<string, number>();
    const totals = { jobs: 0, credits_charged: 0, prompt_tokens: 0, completion_tokens: 0 };
    for (const row of rows) {
      const jobs = Number(row.jobs);
      const credits = CHARGED_STATUSES.has(row.status) ? Number(row.creditsCharged ?? 0) : 0;
      const prompt = Number(row.promptTokens ?? 0);
      const completion = Number(row.completionTokens ?? 0);
      const day = byDay.get(Number(row.day));
      if (day) {
        day.jobs += jobs;
        day.credits_charged += credits;
        day.prompt_tokens += prompt;
        day.completion_tokens += completion;
        if (credits > 0) day.credits_by_model[row.modelId] = (day.credits_by_model[row.modelId] ?? 0) + credits;
      }
      const model = byModel.get(row.modelId) ?? {
        model: row.modelId,
        jobs: 0,
        credits_charged: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
      };
      model.jobs += jobs;
      model.credits_charged += credits;
      model.prompt_tokens += prompt;
      model.completion_tokens += completion;
      byModel.set(row.modelId, model);
      byOutcome.set(row.status, (byOutcome.get(row.status) ?? 0) + jobs);
      totals.jobs += jobs;
      totals.credits_charged += credits;
      totals.prompt_tokens += prompt;
      totals.completion_tokens += completion;
    }
    return {
      object: "activity",
      wallet: lower,
      days,
      from: isoDay(firstDay),
      to: isoDay(today),
      totals,
      by_day: [...byDay.values()],
      by_model: [...byModel.values()].sort((a, b) => b.credits_charged - a.credits_charged || b.jobs - a.jobs),
      by_outcome: [...byOutcome.entries()].map(([status, jobs]) => ({ status, jobs })).sort((a, b) => b.jobs - a.jobs),
      time_to_first_token: ttft.rows.map((row) => ({
        date: isoDay(Number(row.day)),
        jobs: Number(row.jobs),
        p50_ms: Math.round(row.p50),
        p95_ms: Math.round(row.p95),
      })),
    };
  }
}
