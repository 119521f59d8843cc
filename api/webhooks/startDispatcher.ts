import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { IndexReader } from "./chainEventFeed.js";
import { ingestChainEvents } from "./ingestChainEvents.js";
import { ingestProcessingJobs } from "./ingestProcessingJobs.js";
import { DELIVERY_CHANNEL } from "./recordEvent.js";
import { DeliverySlots } from "./deliverySlots.js";
import { startRoundLoop } from "./roundLoop.js";
import { createSender } from "./sendDelivery.js";
import type { TargetPolicy } from "./targetPolicy.js";
import { indexTablesOf, type IndexTableListener } from "../readModel/indexTables.js";

export interface DispatcherLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface DispatcherDeps {
  /** Pool on the gateway schema (migrations applied). */
  pool: pg.Pool;
  /** The index: `chainEventFeed(indexClient)` in the gateway, `ponderIndexReader(config.INDEXER_URL)` alone. */
  index: IndexReader;
  policy: TargetPolicy;
  /** WEBHOOK_RETRY_SCHEDULE_MS: 5 delays; attempt 1 is immediate whatever the first value. */
  retryScheduleMs: number[];
  /** WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  /** Extra CA (PEM) trusted for receivers (WEBHOOK_CA_FILE's content). */
  extraCa?: string;
  logger?: DispatcherLogger;
  /**
   * The channel on which the index NOTIFYs every block it has indexed: Ponder's live-query channel,
   * `<index schema>_live_query` (`indexNotifyChannel`). When set and LISTENed, ingestion runs on each notification and
   * polls only every `ingestFallbackMs`; otherwise (or while the LISTEN connection is down) every `ingestIntervalMs`.
   */
  indexChannel?: string;
  /**
   * Hears what the index's notifications say (the tables each block wrote) and whether they reach this process, for
   * the gateway's caches of index rows (api/ledger/activeKeyCache.ts); the dispatcher's LISTEN connection serves both.
   */
  indexTables?: IndexTableListener;
  /** How often the index is polled for new chain events without notifications. Default 100 ms. */
  ingestIntervalMs?: number;
  /** How often ingestion runs anyway while notifications arrive (a lost one, another gateway's job.processing).
   *  Default 1 s. */
  ingestFallbackMs?: number;
  /** How often due deliveries are looked for when nothing announced one (retries come due this way). Default 500 ms. */
  deliveryIntervalMs?: number;
  /** Least time between the starts of two ingestion rounds woken by notifications or the gateway (they are
   *  coalesced: roundLoop.ts). Default 50 ms. */
  ingestMinGapMs?: number;
  /** Least time between the starts of two delivery claims woken by announcements or freed slots. Default 10 ms. */
  deliveryMinGapMs?: number;
  /** How long a claimed delivery is reserved; a crashed dispatcher's claims come back after it. Must exceed
   *  `timeoutMs`. Default timeoutMs + 30 s. */
  leaseMs?: number;
  /** Most deliveries claimed by one query. Default 32. */
  batchSize?: number;
  /** Attempts in flight at once over all endpoints, each in its own slot (deliverySlots.ts). Default 256. */
  maxInFlight?: number;
  /** Attempts one endpoint (webhook) may have in flight at once. Default 2. */
  perEndpointInFlight?: number;
  /** Poll the gateway's `gateway_job` table for job.processing (default true; the table is migration 001). */
  pollGatewayJobs?: boolean;
  /** Name of this dispatcher in leases. Default a random id. */
  owner?: string;
}

export interface Dispatcher {
  /** Finishes in-flight attempts (recording them), then stops polling. */
  stop(): Promise<void>;
  /** Runs both ingestions and a delivery round now (tests, and the gateway after it enqueued something). */
  wake(): void;
  /** A job of this gateway moved to processing: its job.processing is ingested (not the index's events). */
  jobProcessing(): void;
}

/** Each woken ingestion (the index's events, job.processing) is paced to at most 20 rounds/s however many blocks
 *  and jobs wake it: an event waits ≤ 50 ms more. A full batch is still read again at once. */
const INGEST_MIN_GAP_MS = 50;
/** Woken delivery claims at most 100/s; one endpoint (2 slots) still gets up to 200 attempts/s. */
const DELIVERY_MIN_GAP_MS = 10;
/** A failed LISTEN connection is opened again after 1 s, doubling to at most 30 s while it keeps failing. */
const LISTEN_RETRY_MS = 1_000;
const LISTEN_RETRY_MAX_MS = 30_000;

const silent: DispatcherLogger = { info() {}, warn() {}, error() {} };

/**
 * The webhook dispatcher: tails the index's chain_event log into events and deliveries (ingestChainEvents.ts)
 * and attempts due deliveries (runDeliveries.ts). Any number may run at once (one per gateway replica): the
 * cursor row lock makes ingestion single-writer and SKIP LOCKED + leases make delivery claims disjoint.
 * New deliveries are announced with NOTIFY, so an idle dispatcher attempts them at once.
 */
export function startDispatcher(deps: DispatcherDeps): Dispatcher {
  if (deps.leaseMs !== undefined && deps.leaseMs <= deps.timeoutMs) throw new Error("leaseMs must exceed timeoutMs");
  const logger = deps.logger ?? silent;
  const owner = deps.owner ?? `dispatcher_${randomUUID()}`;
  const sender = createSender({
    policy: deps.policy,
    timeoutMs: deps.timeoutMs,
    ...(deps.extraCa ? { extraCa: deps.extraCa } : {}),
  });
  const runOptions = {
    retryScheduleMs: deps.retryScheduleMs,
    leaseMs: deps.leaseMs ?? deps.timeoutMs + 30_000,
    owner,
    batchSize: deps.batchSize ?? 32,
  };
  let stopping = false;
  // Whether the index's notifications reach this dispatcher (its LISTEN connection is up).
  let indexWakes = false;

  const slots = new DeliverySlots(
    deps.pool,
    sender,
    runOptions,
    { maxInFlight: deps.maxInFlight ?? 256, perEndpoint: deps.perEndpointInFlight ?? 2 },
    () => claims.wake(),
    (error, delivery) => logger.warn({ err: error, deliveryId: delivery.id }, "webhook attempt not recorded"),
  );
  // Claims whenever a slot is free or something became due; attempts run in their slots, never as a round.
  const claims = startRoundLoop({
    round: async () => {
      try {
        return await slots.fill();
      } catch (error) {
        logger.warn({ err: error }, "webhook delivery claim failed; retrying");
        return false;
      }
    },
    idleMs: () => deps.deliveryIntervalMs ?? 500,
    minGapMs: deps.deliveryMinGapMs ?? DELIVERY_MIN_GAP_MS,
  });
  // Two loops, each woken only by what can bring it work: the index's notifications (a block committed) for its
  // chain events, the gateway's job.processing for its own table. One loop for both read the index once per job
  // that reached a worker, whether or not a block had been indexed since: at 20 streams/s on a chain with 1 s
  // blocks, 19 of 20 of those reads (a transaction with the cursor's row lock and an HTTP read of the index)
  // found nothing (issue 26). Each still polls every `idleMs`, so a lost notification only waits.
  const idleIngestMs = () => (indexWakes ? (deps.ingestFallbackMs ?? 1_000) : (deps.ingestIntervalMs ?? 100));
  const ingestMinGapMs = deps.ingestMinGapMs ?? INGEST_MIN_GAP_MS;
  // An ingestion round: what it enqueued wakes the claims at once; a failure is logged and waits for the next wake.
  const ingestionLoop = (ingest: () => Promise<{ deliveries: number; more: boolean }>, what: string) =>
    startRoundLoop({
      round: async () => {
        try {
          const result = await ingest();
          if (result.deliveries > 0) claims.wake();
          return result.more;
        } catch (error) {
          logger.warn({ err: error }, `webhook ingestion of ${what} failed; retrying`);
          return false;
        }
      },
      idleMs: idleIngestMs,
      minGapMs: ingestMinGapMs,
    });
  const chainIngestion = ingestionLoop(
    () =>
      ingestChainEvents(deps.pool, deps.index, {
        onMalformed: (rowId, error) =>
          logger.error({ chainEventId: rowId, err: error }, "chain event skipped: malformed"),
      }),
    "chain events",
  );
  const jobIngestion =
    deps.pollGatewayJobs === false
      ? undefined
      : ingestionLoop(() => ingestProcessingJobs(deps.pool), "processing jobs");
  const ingestAll = () => {
    chainIngestion.wake();
    jobIngestion?.wake();
  };

  // LISTEN on a connection of its own: deliveries enqueued by any process (another dispatcher's ingestion, the
  // gateway's job.processing) wake this one at once, and so does each block the index commits (indexChannel). A
  // connection that fails (server restart, a terminated backend) is replaced after a pause; until then the loops
  // poll at their short intervals.
  let listener: pg.PoolClient | null = null;
  let relisten: NodeJS.Timeout | undefined;
  let listenFailures = 0;
  const listen = async (): Promise<void> => {
    let client: pg.PoolClient | undefined;
    try {
      client = await deps.pool.connect();
      if (stopping) return client.release();
      const connection = client;
      listener = connection;
      connection.on("notification", (message) => {
        if (message.channel === DELIVERY_CHANNEL) return claims.wake();
        chainIngestion.wake();
        deps.indexTables?.changed(indexTablesOf(message.payload));
      });
      let failed = false;
      // `on`, not `once`: a client may emit more than one error, and an unheard one would take the process down.
      connection.on("error", (error) => {
        if (failed) return;
        failed = true;
        indexWakes = false;
        deps.indexTables?.listening(false);
        if (listener === connection) listener = null;
        connection.release(error);
        logger.warn({ err: error }, "webhook LISTEN connection failed; polling until it is back");
        listenAgain();
      });
      await connection.query(`LISTEN ${DELIVERY_CHANNEL}`);
      if (deps.indexChannel) {
        await connection.query(`LISTEN ${connection.escapeIdentifier(deps.indexChannel)}`);
        indexWakes = true;
        deps.indexTables?.listening(true);
      }
      listenFailures = 0;
      // Events that came while nobody listened are picked up now rather than at the next fallback poll.
      ingestAll();
      claims.wake();
    } catch (error) {
      indexWakes = false;
      deps.indexTables?.listening(false);
      if (client && listener === client) {
        listener = null;
        client.release(error as Error);
      }
      logger.warn({ err: error }, "webhook LISTEN unavailable; polling until it is back");
      listenAgain();
    }
  };
  const listenAgain = () => {
    if (stopping || relisten) return;
    listenFailures += 1;
    const pauseMs = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MS * 2 ** Math.min(listenFailures - 1, 5));
    relisten = setTimeout(() => {
      relisten = undefined;
      listening = listen();
    }, pauseMs);
    relisten.unref();
  };
  let listening = listen();

  logger.info({ owner }, "webhook dispatcher started");

  return {
    wake() {
      ingestAll();
      claims.wake();
    },
    jobProcessing() {
      jobIngestion?.wake();
    },
    async stop() {
      stopping = true;
      deps.indexTables?.listening(false);
      await Promise.all([chainIngestion.stop(), jobIngestion?.stop(), claims.stop()]);
      await slots.drain();
      if (relisten) clearTimeout(relisten);
      await listening;
      const client = listener as pg.PoolClient | null;
      if (client) {
        await client.query("UNLISTEN *").catch(() => undefined);
        client.release();
      }
      sender.close();
      logger.info({ owner }, "webhook dispatcher stopped");
    },
  };
}

/** The channel Ponder NOTIFYs on each block it indexes into `schema` (its live-query channel, ponder/drizzle/onchain). */
export function indexNotifyChannel(schema: string): string {
  return `${schema}_live_query`;
}
