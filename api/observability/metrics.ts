import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { collectProcessMetrics } from "../../shared/metrics/processMetrics.js";
import { LoopCpuMonitor } from "./loopCpuMonitor.js";
import type { TransactionHealth } from "../chain/transactionManager.js";
import type { IndexLagSnapshot } from "../readModel/indexLag.js";
import { withDeadline } from "../runtime/withDeadline.js";

/** A scrape waits at most this long for the database (a frozen server must not hang the scrape). */
const SCRAPE_QUERY_TIMEOUT_MS = 2_000;

/** What the scrape-time gauges read: bound once the gateway has built its dependencies (`bindMetricSources`). */
export interface MetricSources {
  /** Jobs this process is relaying right now. */
  activeJobs: ReadonlySet<string>;
  /** Open escrows recorded by the gateway (pending/processing/settling rows), and the webhook tables. */
  query: (sql: string) => Promise<{ rows: Record<string, unknown>[] }>;
  /** The worker pool's view of each registered worker. */
  workers: () => { address: string; endpoint: string; healthy: boolean; inflight: number }[];
  /** The latest index lag sample (api/readModel/indexLag.ts). */
  indexLag?: () => IndexLagSnapshot;
  /** The gateway signer's transaction pipeline (api/chain/transactionManager.ts). */
  transactions?: () => TransactionHealth;
}

const SECONDS_FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SECONDS_CHAIN = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];

/**
 * The gateway's Prometheus metrics, built once by `api/main.ts` and passed to whoever records (no module global).
 * Each instance has its own registry (not prom-client's global one, so two gateways in one process, or a unit
 * test, register each metric once per instance).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private sources: MetricSources | undefined;

  readonly httpRequests = new Counter({
    name: "gateway_http_requests_total",
    help: "HTTP requests answered, by route template, method and status code.",
    labelNames: ["route", "method", "code"] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: "gateway_http_request_duration_seconds",
    help: "Time from request to the last byte of the response (streams: until the stream closes).",
    labelNames: ["route", "method"] as const,
    buckets: SECONDS_FAST,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new Histogram({
    name: "gateway_time_to_first_token_seconds",
    help: "From the escrow lock being started to the first token relayed, by model (includes the lock).",
    labelNames: ["model"] as const,
    buckets: SECONDS_FAST,
    registers: [this.registry],
  });

  readonly settlementLag = new Histogram({
    name: "gateway_settlement_lag_seconds",
    help: "From the worker's signed receipt reaching the settlement queue to the settlement transaction mined.",
    buckets: SECONDS_CHAIN,
    registers: [this.registry],
  });

  readonly settlementBatchSize = new Histogram({
    name: "gateway_settlement_batch_size",
    help: "Receipts per settlement transaction sent (1 = single settle).",
    buckets: [1, 2, 5, 10, 20, 50, 100, 200],
    registers: [this.registry],
  });

  readonly settlementFailures = new Counter({
    name: "gateway_settlement_failures_total",
    help: "Receipts whose settlement failed (sent or mined with a revert).",
    registers: [this.registry],
  });

  readonly sweptJobs = new Counter({
    name: "gateway_swept_jobs_total",
    help: "Open jobs the recovery sweeper closed, by outcome.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  readonly lockBatchSize = new Histogram({
    name: "gateway_lock_batch_size",
    help: "Escrow locks per openJobBatch transaction sent (group commit).",
    buckets: [1, 2, 5, 10, 20, 50, 100, 200],
    registers: [this.registry],
  });

  readonly unconfirmedLockCredits = new Gauge({
    name: "gateway_unconfirmed_lock_credits",
    help: "Credits of jobs routed to a worker on a lock not yet mined (this process); bounded by LOCK_UNCONFIRMED_MAX_CREDITS.",
    registers: [this.registry],
  });

  readonly unconfirmedLocks = new Gauge({
    name: "gateway_unconfirmed_lock_jobs",
    help: "Jobs routed to a worker on a lock not yet mined (this process).",
    registers: [this.registry],
  });

  readonly unconfirmedLockRefused = new Counter({
    name: "gateway_unconfirmed_lock_refused_total",
    help: "Locks the chain refused after the job was routed (JobOpenSkipped, or the batch reverted), by reason; the job stopped and nothing was charged.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly unconfirmedLockRefusedCredits = new Counter({
    name: "gateway_unconfirmed_lock_refused_credits_total",
    help: "Credits of work routed on locks the chain then refused: the gateway's loss bound (the worker is never paid for it).",
    registers: [this.registry],
  });

  constructor() {
    collectProcessMetrics(this.registry);
    const loopCpu = new LoopCpuMonitor();
    new Gauge({
      name: "gateway_event_loop_busy_cpu_max_seconds",
      help: "Most CPU time the main thread spent between two turns of the event loop since the previous scrape: nodejs_eventloop_lag_max_seconds without the time the host did not run the process.",
      registers: [this.registry],
      collect() {
        this.set(loopCpu.takeMaxMs() / 1000);
      },
    });
    // `collect` runs with the metric as `this`; these reach the gateway's sources.
    const rows = (sql: string) => this.rows(sql);
    const sources = () => this.sources;
    new Gauge({
      name: "gateway_active_jobs",
      help: "Jobs this gateway process is running now: relaying, or following its settlement until mined.",
      registers: [this.registry],
      collect() {
        this.set(sources()?.activeJobs.size ?? 0);
      },
    });
    new Gauge({
      name: "gateway_open_escrows",
      help: "Jobs with credits locked and not yet closed, as the gateway recorded them (pending, processing, settling).",
      labelNames: ["status"] as const,
      registers: [this.registry],
      async collect() {
        const found = await rows(
          // A row whose escrow was never sent locks nothing: it is not an open escrow (the sweeper fails it).
          "SELECT status, count(*)::int AS n FROM gateway_job WHERE status IN ('pending','processing','settling') AND escrow_tx IS NOT NULL GROUP BY status",
        );
        if (!found) return;
        for (const status of ["pending", "processing", "settling"]) this.set({ status }, 0);
        for (const row of found) this.set({ status: String(row.status) }, Number(row.n));
      },
    });
    this.countOfRows(
      Gauge,
      "gateway_webhook_backlog",
      "Webhook deliveries waiting for an attempt (status pending), all gateways sharing the database.",
      "SELECT count(*)::int AS n FROM webhook_delivery WHERE status = 'pending'",
    );
    this.countOfRows(
      Counter,
      "gateway_webhook_delivery_failures_total",
      "Failed webhook delivery attempts, from the attempt records (all gateways sharing the database).",
      "SELECT count(*)::int AS n FROM webhook_attempt WHERE NOT ok",
    );
    this.countOfRows(
      Counter,
      "gateway_webhooks_failed_total",
      "Webhooks marked failed after five failed attempts in a row.",
      "SELECT count(*)::int AS n FROM webhook WHERE status = 'failed'",
    );
    this.fromIndexLag(
      "gateway_index_lag_blocks",
      "Chain head minus the last block the index has processed (grows from the last known block while the index is away).",
      (lag) => lag?.lagBlocks,
    );
    this.fromIndexLag(
      "gateway_index_lag_seconds",
      "Age of the oldest chain block the index has not processed yet (0 when caught up).",
      (lag) => lag?.lagSeconds,
    );
    this.fromIndexLag("gateway_index_up", "1 when the index answered the last lag sample, else 0.", (lag) =>
      lag?.indexUp ? 1 : 0,
    );
    this.fromIndexLag("gateway_chain_up", "1 when the chain node answered the last lag sample, else 0.", (lag) =>
      lag?.chainUp ? 1 : 0,
    );
    const transactionGauges: [string, string, keyof TransactionHealth, "gauge" | "counter"][] = [
      ["gateway_tx_pending", "Gateway transactions signed and not mined yet.", "pending", "gauge"],
      [
        "gateway_tx_oldest_pending_seconds",
        "Age of the oldest gateway transaction not mined yet (0 when none).",
        "oldestPendingAgeMs",
        "gauge",
      ],
      [
        "gateway_tx_nonce_gap",
        "Nonces below the signer's next one the node holds nothing of ours for, at the last watch.",
        "nonceGap",
        "gauge",
      ],
      [
        "gateway_tx_replacements_total",
        "Transactions replaced at the same nonce with higher fees.",
        "replacements",
        "counter",
      ],
      [
        "gateway_tx_rebroadcasts_total",
        "Transactions broadcast again because the node had lost them.",
        "rebroadcasts",
        "counter",
      ],
      ["gateway_tx_gap_fills_total", "Nonce gaps filled with a no-op transaction.", "gapFills", "counter"],
    ];
    for (const [name, help, field, kind] of transactionGauges) {
      const read = () => {
        const health = sources()?.transactions?.();
        if (!health) return undefined;
        return field === "oldestPendingAgeMs" ? health[field] / 1000 : health[field];
      };
      if (kind === "gauge")
        new Gauge({
          name,
          help,
          registers: [this.registry],
          collect() {
            const value = read();
            if (value !== undefined) this.set(value);
          },
        });
      else
        new Counter({
          name,
          help,
          registers: [this.registry],
          collect() {
            const value = read();
            if (value === undefined) return;
            this.reset();
            this.inc(value);
          },
        });
    }
    new Gauge({
      name: "gateway_worker_up",
      help: "1 when the worker's last health probe succeeded, else 0, per registered worker.",
      labelNames: ["worker", "endpoint"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const worker of sources()?.workers() ?? [])
          this.set({ worker: worker.address, endpoint: worker.endpoint }, worker.healthy ? 1 : 0);
      },
    });
    new Gauge({
      name: "gateway_worker_inflight",
      help: "Jobs this gateway is running on each worker.",
      labelNames: ["worker"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const worker of sources()?.workers() ?? []) this.set({ worker: worker.address }, worker.inflight);
      },
    });
  }

  /**
   * A metric whose value is one `count(*)::int AS n` read at scrape time (all gateways sharing the database). A
   * counter is reset and incremented to the count (prom-client counters only go up); a failed read keeps the last
   * value.
   */
  private countOfRows(kind: typeof Gauge | typeof Counter, name: string, help: string, sql: string): void {
    const rows = (query: string) => this.rows(query);
    if (kind === Gauge) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const found = await rows(sql);
          if (found) this.set(Number(found[0]?.n ?? 0));
        },
      });
      return;
    }
    new Counter({
      name,
      help,
      registers: [this.registry],
      async collect() {
        const found = await rows(sql);
        if (!found) return;
        this.reset();
        this.inc(Number(found[0]?.n ?? 0));
      },
    });
  }

  /** A gauge read from the latest index lag sample at scrape time; `undefined` keeps the last value. */
  private fromIndexLag(name: string, help: string, valueOf: (lag: IndexLagSnapshot | undefined) => number | undefined) {
    const sources = () => this.sources;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const value = valueOf(sources()?.indexLag?.());
        if (value !== undefined) this.set(value);
      },
    });
  }

  bind(sources: MetricSources): void {
    this.sources = sources;
  }

  /** A scrape never fails because the database is away: `undefined`, and the metric keeps its last value. */
  private async rows(sql: string): Promise<Record<string, unknown>[] | undefined> {
    if (!this.sources) return undefined;
    try {
      return (await withDeadline(this.sources.query(sql), SCRAPE_QUERY_TIMEOUT_MS, "metrics query")).rows;
    } catch {
      return undefined;
    }
  }
}
