import type { Logger } from "pino";
import { keccak256, toBytes, type Hex } from "viem";
import type { IndexReader } from "../readModel/indexReader.js";
import type { LatencyStats } from "./latencyStats.js";
import type { WorkerCandidate } from "./pickWorker.js";
import type { WorkerClient } from "./workerClient.js";

interface WorkerState {
  address: Hex;
  endpoint: string;
  modelKeys: Set<string>;
  /** Model ids the worker's /healthz says it serves. */
  servedModels: Set<string>;
  healthy: boolean;
  backend: string | undefined;
  lastProbeAt: number;
  /** Failures since the last successful job or probe; a failing worker is skipped until a probe clears it. */
  recentFailures: number;
  inflight: number;
}

const FRESH_REFRESH_MIN_INTERVAL_MS = 1_000;

export interface WorkerPoolOptions {
  probeIntervalMs: number;
  probeTimeoutMs: number;
  /** Failures in a row after which a worker is taken out until the next good probe. */
  maxRecentFailures: number;
  /** The registry's minimum stake: a worker slashed below it can no longer be paid, so it gets no jobs. */
  minStake: bigint;
}

/**
 * The registered workers (from the index) with their live health (periodic /healthz probes, recent job
 * failures) and this gateway's load on each. The router reads candidates from here.
 */
export class WorkerPool {
  private workers = new Map<string, WorkerState>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private lastRefreshAt = 0;
  private readonly modelKeys = new Map<string, string>();

  constructor(
    private readonly index: IndexReader,
    private readonly client: WorkerClient,
    private readonly latency: LatencyStats,
    private readonly logger: Logger,
    private readonly options: WorkerPoolOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.options.probeIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reloads the registered workers and probes each; concurrent callers share one round. */
  refresh(): Promise<void> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    this.lastRefreshAt = Date.now();
    let registered;
    try {
      registered = await this.index.activeWorkers();
    } catch (error) {
      // The index is away: keep the workers we know and keep probing them, so routing goes on (and a worker
      // that died meanwhile is still taken out).
      this.logger.warn({ err: error }, "cannot read workers from the index; probing the known ones");
      await Promise.all([...this.workers.values()].map((worker) => this.probe(worker)));
      return;
    }
    const next = new Map<string, WorkerState>();
    for (const row of registered) {
      if (row.stake < this.options.minStake) continue;
      const address = row.address.toLowerCase();
      const previous = this.workers.get(address);
      next.set(address, {
        address: row.address,
        endpoint: row.endpoint,
        modelKeys: new Set(row.modelKeys.map((key) => key.toLowerCase())),
        servedModels: previous?.servedModels ?? new Set(),
        healthy: previous?.endpoint === row.endpoint ? previous.healthy : false,
        backend: previous?.backend,
        lastProbeAt: previous?.lastProbeAt ?? 0,
        recentFailures: previous?.recentFailures ?? 0,
        inflight: previous?.inflight ?? 0,
      });
    }
    this.workers = next;
    await Promise.all([...next.values()].map((worker) => this.probe(worker)));
  }

  private async probe(worker: WorkerState): Promise<void> {
    try {
      const health = await this.client.health(worker.endpoint, this.options.probeTimeoutMs);
      const sameKey = health.address.toLowerCase() === worker.address.toLowerCase();
      if (!sameKey)
        this.logger.warn(
          { worker: worker.address, reported: health.address },
          "worker endpoint reports another address",
        );
      worker.healthy = health.status === "ok" && sameKey;
      worker.servedModels = new Set(health.models);
      worker.backend = health.backend;
      worker.recentFailures = 0;
    } catch (error) {
      if (worker.healthy)
        this.logger.warn({ worker: worker.address, err: (error as Error).message }, "worker probe failed");
      worker.healthy = false;
    }
    worker.lastProbeAt = Date.now();
  }

  /** Healthy workers registered for `modelId` whose /healthz lists it. */
  candidates(modelId: string): WorkerCandidate[] {
    const modelKey = this.modelKeyOf(modelId);
    const result: WorkerCandidate[] = [];
    for (const worker of this.workers.values()) {
      if (!worker.healthy || worker.recentFailures >= this.options.maxRecentFailures) continue;
      if (!worker.modelKeys.has(modelKey) || !worker.servedModels.has(modelId)) continue;
      result.push({
        address: worker.address,
        endpoint: worker.endpoint,
        inflight: worker.inflight,
        ttftP50Ms: this.latency.workerMedian(worker.address, modelId),
      });
    }
    return result;
  }

  /** keccak256 of a model id, remembered: hashing it on each request showed in the gateway's profile (issue 26). */
  private modelKeyOf(modelId: string): string {
    let key = this.modelKeys.get(modelId);
    if (key === undefined) {
      key = keccak256(toBytes(modelId)).toLowerCase();
      // Model ids come from requests only once the catalog knows them, but the map stays bounded regardless.
      if (this.modelKeys.size >= 1_000) this.modelKeys.clear();
      this.modelKeys.set(modelId, key);
    }
    return key;
  }

  /** Candidates, probing once more first when none is known healthy (fresh start, worker just came back). */
  async candidatesFresh(modelId: string): Promise<WorkerCandidate[]> {
    const now = this.candidates(modelId);
    // At most one extra round per second, however many requests ask for an unhosted model.
    if (now.length > 0 || Date.now() - this.lastRefreshAt < FRESH_REFRESH_MIN_INTERVAL_MS) return now;
    await this.refresh();
    return this.candidates(modelId);
  }

  /** Every registered worker's last known health and this gateway's load on it (metrics). */
  health(): { address: string; endpoint: string; healthy: boolean; inflight: number }[] {
    return [...this.workers.values()].map((worker) => ({
      address: worker.address,
      endpoint: worker.endpoint,
      healthy: worker.healthy && worker.recentFailures < this.options.maxRecentFailures,
      inflight: worker.inflight,
    }));
  }

  backendOf(address: string): string | undefined {
    return this.workers.get(address.toLowerCase())?.backend;
  }

  jobStarted(address: string): void {
    const worker = this.workers.get(address.toLowerCase());
    if (worker) worker.inflight++;
  }

  jobEnded(address: string, outcome: "ok" | "failed"): void {
    const worker = this.workers.get(address.toLowerCase());
    if (!worker) return;
    worker.inflight = Math.max(0, worker.inflight - 1);
    if (outcome === "ok") worker.recentFailures = 0;
    else worker.recentFailures++;
  }
}
