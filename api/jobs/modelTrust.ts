import type { Logger } from "pino";
import type pg from "pg";
import type { IndexReader } from "../readModel/indexReader.js";

/** The window every trust figure covers (api/README.md "Trust figures of a model"). */
export const TRUST_WINDOW_HOURS = 24;
/** Figures are recomputed at most this often; a model listing is read far more often than it changes. */
const CACHE_MS = 5_000;

/** What a client needs to pick a model, over the last `TRUST_WINDOW_HOURS` (the `service` extension of a Model). */
export interface ModelTrustFigures {
  stats_window_hours: number;
  jobs_observed: number;
  p95_time_to_first_token_ms: number | null;
  success_rate: number | null;
  disputes_opened: number;
  disputes_upheld: number;
}

interface GatewayFigures {
  model: string;
  ended: string;
  succeeded: string;
  p95_ttft: number | null;
}

/** A job counts as answered once its receipt was verified: settling, settled, or settled and then disputed. */
const ANSWERED = ["settling", "settled", "disputed"];
const ENDED = [...ANSWERED, "failed", "refunded"];

/**
 * Trust figures per model, from the gateway's own records (`gateway_job`: outcome and time to first token of every
 * job it ran) and the index (disputes and their outcome, which only the chain knows). A job failed because the client
 * left is no verdict on the model and is left out; one it left mid-answer was settled for the delivered part and
 * counts as answered.
 */
export class ModelTrust {
  private cache: { at: number; figures: Map<string, ModelTrustFigures> } | undefined;
  private loading: Promise<Map<string, ModelTrustFigures>> | undefined;
  /** Disputes of the last successful index read: the index being behind must not hide the listing. */
  private lastDisputes = new Map<string, { opened: number; upheld: number }>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly index: IndexReader,
    private readonly logger: Logger,
    private readonly windowHours = TRUST_WINDOW_HOURS,
  ) {}

  /** Figures of `modelId`; a model without jobs in the window gets zero counts and null rates. */
  async of(modelId: string): Promise<ModelTrustFigures> {
    return (await this.load()).get(modelId) ?? this.empty();
  }

  private empty(): ModelTrustFigures {
    return {
      stats_window_hours: this.windowHours,
      jobs_observed: 0,
      p95_time_to_first_token_ms: null,
      success_rate: null,
      disputes_opened: 0,
      disputes_upheld: 0,
    };
  }

  private async load(): Promise<Map<string, ModelTrustFigures>> {
    if (this.cache && Date.now() - this.cache.at < CACHE_MS) return this.cache.figures;
    this.loading ??= this.compute()
      .then((figures) => {
        this.cache = { at: Date.now(), figures };
        return figures;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private async compute(): Promise<Map<string, ModelTrustFigures>> {
    const [gateway, disputes] = await Promise.all([this.gatewayFigures(), this.disputes()]);
    const figures = new Map<string, ModelTrustFigures>();
    const at = (model: string) => {
      let entry = figures.get(model);
      if (!entry) figures.set(model, (entry = this.empty()));
      return entry;
    };
    for (const row of gateway) {
      const entry = at(row.model);
      const ended = Number(row.ended);
      entry.jobs_observed = ended;
      entry.success_rate = ended === 0 ? null : Math.round((Number(row.succeeded) / ended) * 10_000) / 10_000;
      entry.p95_time_to_first_token_ms = row.p95_ttft === null ? null : Math.round(row.p95_ttft);
    }
    for (const [model, counts] of disputes) {
      const entry = at(model);
      entry.disputes_opened = counts.opened;
      entry.disputes_upheld = counts.upheld;
    }
    return figures;
  }

  private async gatewayFigures(): Promise<GatewayFigures[]> {
    const result = await this.pool.query<GatewayFigures>(
      `SELECT model,
              count(*) AS ended,
              count(*) FILTER (WHERE status = ANY($2)) AS succeeded,
              percentile_disc(0.95) WITHIN GROUP (ORDER BY first_token_ms) AS p95_ttft
         FROM gateway_job
        WHERE created_at >= now() - make_interval(hours => $1)
          AND escrow_tx IS NOT NULL
          AND status = ANY($3)
          AND NOT (status = 'failed' AND coalesce(error, '') LIKE 'client disconnected%')
        GROUP BY model`,
      [this.windowHours, ANSWERED, ENDED],
    );
    return result.rows;
  }

  private async disputes(): Promise<Map<string, { opened: number; upheld: number }>> {
    const since = BigInt(Math.floor(Date.now() / 1000) - this.windowHours * 3600);
    try {
      const rows = await this.index.disputesSince(since);
      const counts = new Map<string, { opened: number; upheld: number }>();
      for (const row of rows) {
        const entry = counts.get(row.modelId) ?? { opened: 0, upheld: 0 };
        entry.opened++;
        if (row.outcome === "upheld") entry.upheld++;
        counts.set(row.modelId, entry);
      }
      this.lastDisputes = counts;
      return counts;
    } catch (error) {
      this.logger.warn({ err: error }, "dispute figures unavailable; using the last known ones");
      return this.lastDisputes;
    }
  }
}
