import type pg from "pg";
import type { Logger } from "pino";
import type { Hex } from "viem";
import type { JobState } from "@credit-metered/client";
import type { Receipt } from "../chain/receiptTypes.js";
import { pgArray } from "../db/pgArray.js";

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
  closed_before_lock: boolean;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  first_token_ms?: number | null;
  final: boolean;
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

/** Columns besides `status`, which only jobLifecycle.ts changes (through `transition`). `null` clears a fact (a
 *  reorg removed the settlement it names). */
export type JobPatch = Partial<{
  worker: string;
  escrow_tx: string;
  deadline: bigint;
  /** Kept from the first write: a later acknowledgement (failover) never moves it. */
  processing_at: Date;
  receipt: Receipt;
  signature: string;
  output_hash: string;
  final_token_at: number;
  prompt_tokens: number;
  completion_tokens: number;
  credits_charged: bigint | null;
  settlement_tx: string | null;
  settlement_block: bigint | null;
  fail_tx: string;
  refund_tx: string;
  timed_out: boolean;
  error: string;
  completed_at: Date | null;
  first_token_ms: number;
  /** The chain facts the row's status stands on are past the finality depth (docs/DESIGN.md "Finality"). */
  final: boolean;
  /** Closed without a charge while its lock was not on chain (migration 046). */
  closed_before_lock: boolean;
}>;

/** PostgreSQL type of each patchable column, for the group commit's `unnest` arrays. */
const COLUMN_TYPES: Readonly<Record<keyof JobPatch, string>> = {
  worker: "text",
  escrow_tx: "text",
  deadline: "bigint",
  processing_at: "timestamptz",
  receipt: "jsonb",
  signature: "text",
  output_hash: "text",
  final_token_at: "bigint",
  prompt_tokens: "integer",
  completion_tokens: "integer",
  credits_charged: "bigint",
  settlement_tx: "text",
  settlement_block: "bigint",
  fail_tx: "text",
  refund_tx: "text",
  timed_out: "boolean",
  error: "text",
  completed_at: "timestamptz",
  first_token_ms: "integer",
  final: "boolean",
  closed_before_lock: "boolean",
};

export interface JobStoreOptions {
  /** Writes that are due (a deferred move, facts past their hold) wait at most this long for their group commit
   *  (a status move that a caller awaits flushes them sooner). Default 20 ms. */
  tickMs?: number;
  /** A job's side facts and held moves wait at most this long for the job's next status move, which they are
   *  folded into; after it they are written on their own. Default 1 s. */
  holdMs?: number;
  logger?: Logger;
}

/** How a deferred move waits: `true` for the next tick; `"hold"` like a side fact, for the job's next move. */
export type Deferral = boolean | "hold";

/** A status move someone made: its compare-and-set, its columns, and its caller. */
interface Move {
  from: GatewayJobStatus[];
  to: GatewayJobStatus;
  patch: JobPatch;
  done: Settle<boolean>;
}

/** What a job has waiting in memory, in the order it was made: facts and held moves. */
type HeldItem = { kind: "facts"; patch: JobPatch } | ({ kind: "move" } & Move);

interface Held {
  items: HeldItem[];
  /** When the first of them was made: the hold bound runs from here. */
  since: number;
}

/** A write waiting for the next group commit: one statement row. */
type Pending =
  | { kind: "insert"; jobId: string; job: NewGatewayJob; done: Settle<void> }
  | { kind: "patch"; jobId: string; patch: JobPatch; attempts: number }
  | {
      kind: "move";
      jobId: string;
      /** The compare-and-set: of the first move collapsed into this write. */
      from: GatewayJobStatus[];
      /** The target of the last move collapsed into it. */
      to: GatewayJobStatus;
      /** Every column written, facts and the moves' own, merged in the order they were made. */
      patch: JobPatch;
      /** The side facts folded in: written on their own when the compare-and-set does not match. */
      facts: JobPatch;
      /** Every move collapsed into this write: all get its result. */
      done: Settle<boolean>[];
      /** Set when its statement ran: whether the compare-and-set matched. */
      moved?: boolean;
    };

type MoveWrite = Extract<Pending, { kind: "move" }>;

interface Settle<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A deferred fact that failed to commit is tried again with the next group this many times, then dropped. */
const PATCH_ATTEMPTS = 3;
/** PostgreSQL's deadlock and serialization failures: the whole group is tried again once. */
const RETRYABLE_CODES = new Set(["40P01", "40001"]);

/**
 * The gateway_job table (db/migrations/001_gateway_jobs.sql), written by group commit (issue 26 "Two writes per
 * job"): a job's row is written when it is created and when it closes; what happens between rides those writes.
 * - `insert` has a lane of its own: inserts flush at once when no insert is being written, else right after it or
 *   with the next group of updates, whichever starts first (a new job waits behind other new jobs only, not behind
 *   other jobs' closes: its row is on the path to the first token). A job's later writes wait for its insert
 *   (`inserting`).
 * - `transition` (the status moves whose result a caller acts on: the close to `settling`, `failed`, `refunded`)
 *   flushes at once when no group is being written, else right after it: no added wait when idle, many jobs per
 *   commit under load. Both resolve once committed, so the receipt stored by the move to `settling` is durable
 *   before it is settled or answered.
 * - `update` (side facts: transaction hashes, deadline, first-token time) and `transition(…, { deferred: "hold" })`
 *   (the acknowledgement, pending → processing) are held in memory and folded into the job's next move: its
 *   statement writes them too. A job without a move for `holdMs` (a long stream) gets them written on their own.
 * - `transition(…, { deferred: true })` rides the next tick, with the facts held for the job. The move to
 *   `settled` is held too, so that `final` can join it; `writeSoon` then sends it with the next tick.
 * - Held moves followed by another move of the same job collapse into one compare-and-set (the first's sources,
 *   the last's target) when that changes nothing: the later move's sources are among the earlier's and include
 *   its target, so the collapsed write matches exactly when the moves one after the other would have both
 *   matched, and neither would have moved otherwise. Every caller gets that one result.
 * A status move stays a compare-and-set per row inside the group (`WHERE status = ANY(from)`, the moved rows
 * returned), so two gateways never both make the same move; facts folded into a move that did not match are
 * written on their own next. Writes of one job keep their order (a group holds at most one write per job per
 * statement round). Reads through the store (`get`, `listForKey`, `listOpen`, `listUnfinal`) show what this
 * process holds or has queued for a row, so nobody reads an older view of a job than before.
 */
export class JobStore {
  private queue: Pending[] = [];
  /** New rows waiting for the insert lane, and the jobs whose insert is queued there or being committed. */
  private inserts: Extract<Pending, { kind: "insert" }>[] = [];
  private readonly inserting = new Set<string>();
  private insertsFlushing: Promise<void> | undefined;
  /** The group being committed: shown by reads until it is (re-applying a committed write changes nothing). */
  private inFlight: Pending[] = [];
  /** Facts and held moves of each job, oldest job first (a job's entry goes when released). */
  private held = new Map<string, Held>();
  private holdTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A write someone awaits is queued: the next group starts as soon as possible. */
  private due = false;
  private readonly tickMs: number;
  private readonly holdMs: number;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly pool: pg.Pool,
    options: JobStoreOptions = {},
  ) {
    this.tickMs = options.tickMs ?? 20;
    this.holdMs = options.holdMs ?? 1_000;
    this.logger = options.logger;
  }

  /** Writes the new row; resolves once committed (openEscrow sends the lock alongside and routes the job only after both). */
  insert(job: NewGatewayJob): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.inserts.push({ kind: "insert", jobId: job.jobId, job, done: { resolve, reject } });
      this.inserting.add(job.jobId);
      this.insertsFlushing ??= this.writeInserts();
    });
  }

  /** The insert lane: every insert queued meanwhile leaves in the next statement. */
  private async writeInserts(): Promise<void> {
    try {
      while (this.inserts.length > 0) {
        const group = this.inserts;
        this.inserts = [];
        try {
          await this.commit(group).catch((error: unknown) => {
            if (!RETRYABLE_CODES.has((error as { code?: string }).code ?? "")) throw error;
            return this.commit(group);
          });
          for (const item of group) item.done.resolve();
        } catch (error) {
          this.logger?.warn({ err: error, writes: group.length }, "insert of job rows failed");
          for (const item of group) item.done.reject(error);
        } finally {
          for (const item of group) this.inserting.delete(item.jobId);
        }
      }
    } finally {
      this.insertsFlushing = undefined;
      // Writes of those jobs made while their insert was on its way were left in the queue.
      if (this.queue.length > 0) this.schedule(true);
    }
  }

  /**
   * Records facts of a job; never its status (jobLifecycle.ts owns that). Held for the job's next move; returns
   * at once. Committed with that move, or on their own within `holdMs` + `tickMs` (a failed group is tried
   * again, see PATCH_ATTEMPTS).
   */
  async update(jobId: string, patch: JobPatch & { status?: never }): Promise<void> {
    if ("status" in patch) throw new Error("gateway_job.status changes only through jobLifecycle.ts");
    const facts = definedOf(patch);
    if (Object.keys(facts).length === 0) return;
    const held = this.holdFor(jobId);
    const last = held.items.at(-1);
    if (last?.kind === "facts") mergeInto(last.patch, facts);
    else held.items.push({ kind: "facts", patch: facts });
  }

  /**
   * Compare-and-set of the status: moves to `status` only from one of `from`; false when the row was elsewhere.
   * Only jobLifecycle.ts calls it (the transition table lives there). Resolves once committed; `deferred: true`
   * lets it wait for the tick, `deferred: "hold"` for the job's next move (at most `holdMs`).
   */
  transition(
    jobId: string,
    from: GatewayJobStatus[],
    status: GatewayJobStatus,
    patch: JobPatch = {},
    options: { deferred?: Deferral } = {},
  ): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const move: HeldItem = { kind: "move", from, to: status, patch: definedOf(patch), done: { resolve, reject } };
      if (options.deferred === "hold") {
        this.holdFor(jobId).items.push(move);
        return;
      }
      this.release(jobId, [move]);
      this.schedule(!options.deferred);
    });
  }

  /** Writes what a job holds with the next tick instead of at its next move (nothing more is coming). */
  writeSoon(jobId: string): void {
    if (!this.held.has(jobId)) return;
    this.release(jobId);
    this.schedule(false);
  }

  /** Commits everything held and queued (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.held.size > 0 || this.queue.length > 0 || this.flushing || this.insertsFlushing) {
      await this.insertsFlushing;
      // Facts made while a group commits (a settlement recorded meanwhile) are held: they go with the next one.
      for (const jobId of [...this.held.keys()]) this.release(jobId);
      if (!this.flushing) this.schedule(true);
      await this.flushing;
    }
  }

  private holdFor(jobId: string): Held {
    let held = this.held.get(jobId);
    if (!held) {
      held = { items: [], since: Date.now() };
      this.held.set(jobId, held);
      this.armHold();
    }
    return held;
  }

  /** Moves a job's held items (and `then`, made after them) to the queue, collapsed into as few writes as can be. */
  private release(jobId: string, then: HeldItem[] = []): void {
    const items = [...(this.held.get(jobId)?.items ?? []), ...then];
    this.held.delete(jobId);
    this.queue.push(...writesOf(jobId, items));
  }

  /** The hold bound: jobs whose held items waited `holdMs` (or will within a tick) are released together. */
  private armHold(): void {
    if (this.holdTimer) return;
    const oldest = this.held.values().next().value;
    if (!oldest) return;
    this.holdTimer = setTimeout(
      () => {
        this.holdTimer = undefined;
        const cutoff = Date.now() + this.tickMs - this.holdMs;
        let released = false;
        for (const [jobId, held] of this.held) {
          if (held.since > cutoff) break;
          this.release(jobId);
          released = true;
        }
        if (released) this.schedule(false);
        this.armHold();
      },
      Math.max(0, oldest.since + this.holdMs - Date.now()),
    );
    this.holdTimer.unref();
  }

  private schedule(urgent: boolean): void {
    if (urgent) this.due = true;
    if (this.flushing) return; // the running group starts the next one when it ends
    // Writes that wait only for their job's insert: the insert lane schedules them when it is done.
    if (!this.queue.some((item) => !this.inserting.has(item.jobId))) return;
    if (this.due) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.flushing = this.writeGroups();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.schedule(true);
    }, this.tickMs);
    this.timer.unref();
  }

  private async writeGroups(): Promise<void> {
    try {
      while (this.due && this.queue.length > 0) {
        this.due = false;
        // A job's writes never overtake its insert: they wait in the queue until the insert lane is done.
        const updates = this.queue.filter((item) => !this.inserting.has(item.jobId));
        if (updates.length === 0) break;
        this.queue =
          updates.length === this.queue.length ? [] : this.queue.filter((item) => this.inserting.has(item.jobId));
        // Inserts waiting for the lane's current commit ride this group instead (one commit fewer; they would
        // otherwise wait for that commit to end first). Their jobs' own writes still wait for the next group.
        const absorbed = this.inserts;
        this.inserts = [];
        const group: Pending[] = [...absorbed, ...updates];
        this.inFlight = group;
        await this.writeGroup(group);
        this.inFlight = [];
        if (absorbed.length > 0) {
          for (const item of absorbed) this.inserting.delete(item.jobId);
          // Their jobs' writes made meanwhile go next, as the insert lane sends them.
          if (this.queue.some((item) => absorbed.some((insert) => insert.jobId === item.jobId))) this.due = true;
        }
      }
    } finally {
      this.inFlight = [];
      this.flushing = undefined;
      // What waits only for an insert is scheduled again by the insert lane when it is done.
      if (this.queue.some((item) => !this.inserting.has(item.jobId))) this.schedule(this.due);
    }
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    try {
      await this.commit(group).catch((error: unknown) => {
        if (!RETRYABLE_CODES.has((error as { code?: string }).code ?? "")) throw error;
        return this.commit(group);
      });
    } catch (error) {
      for (const item of group) {
        if (item.kind === "patch") {
          if (++item.attempts < PATCH_ATTEMPTS) this.queue.push(item);
          else this.logger?.warn({ err: error, job_id: item.jobId, facts: Object.keys(item.patch) }, "job facts lost");
          continue;
        }
        if (item.kind === "insert") item.done.reject(error);
        else {
          for (const done of item.done) done.reject(error);
          if (Object.keys(item.facts).length > 0)
            this.queue.push({ kind: "patch", jobId: item.jobId, patch: item.facts, attempts: 1 });
        }
      }
      this.logger?.warn({ err: error, writes: group.length }, "group commit of job rows failed");
      return;
    }
    this.requeueUnmatchedFacts(group);
    for (const item of group) {
      if (item.kind === "insert") item.done.resolve();
      else if (item.kind === "move") for (const done of item.done) done.resolve(item.moved === true);
    }
  }

  /**
   * Facts folded into a move whose compare-and-set did not match were not written: they are queued on their own
   * (as `update` wrote them before), less the columns a later write of the same job in this group already set.
   */
  private requeueUnmatchedFacts(group: Pending[]): void {
    const writtenLater = new Map<string, Set<string>>();
    const requeued: Pending[] = [];
    for (let i = group.length - 1; i >= 0; i--) {
      const item = group[i]!;
      if (item.kind === "insert") continue;
      const later = writtenLater.get(item.jobId) ?? new Set<string>();
      writtenLater.set(item.jobId, later);
      const written = item.kind === "patch" || item.moved === true ? item.patch : undefined;
      if (written) {
        for (const column of Object.keys(written)) later.add(column);
        continue;
      }
      if (item.kind !== "move") continue;
      const facts = Object.fromEntries(Object.entries(item.facts).filter(([column]) => !later.has(column))) as JobPatch;
      if (Object.keys(facts).length === 0) continue;
      for (const column of Object.keys(facts)) later.add(column);
      requeued.unshift({ kind: "patch", jobId: item.jobId, patch: facts, attempts: 0 });
    }
    if (requeued.length === 0) return;
    this.queue.push(...requeued);
    this.schedule(false);
  }

  /** One transaction for the group; marks each move with whether it was made. */
  private async commit(group: Pending[]): Promise<void> {
    const statements = statementsOf(group);
    const run = async (db: pg.Pool | pg.PoolClient) => {
      for (const statement of statements) {
        const result = await db.query<{ job_id: string }>(statement.text, statement.values);
        const matched = new Set(result.rows.map((row) => row.job_id));
        for (const item of statement.moves) item.moved = matched.has(item.jobId);
      }
    };
    if (statements.length === 1) {
      await run(this.pool);
      return;
    }
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await run(client);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The row as this process will leave it: its held and queued writes laid over what the table has. */
  private overlaid(row: GatewayJobRow): GatewayJobRow {
    const queued = [...this.inFlight, ...this.queue].filter((item) => item.jobId === row.job_id);
    const held = this.held.get(row.job_id)?.items ?? [];
    if (queued.length === 0 && held.length === 0) return row;
    const view = { ...row };
    for (const item of [...queued, ...held]) {
      if (item.kind === "insert") continue;
      if (item.kind === "move" && item.from.includes(view.status)) {
        view.status = item.to;
        applyTo(view, item.patch);
      } else if (item.kind === "move") applyTo(view, "facts" in item ? item.facts : {});
      else applyTo(view, item.patch);
    }
    return view;
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
    return result.rows[0] && this.overlaid(result.rows[0]);
  }

  /** Jobs of a key, newest first, strictly between the cursors. */
  async listForKey(
    keyHash: Hex,
    options: { before?: string; after?: string; model?: string; limit: number; order?: "asc" | "desc" },
  ): Promise<GatewayJobRow[]> {
    // Rows whose escrow was never sent (openJob refused) are not jobs; a running job's `escrow_tx` may still be in
    // the next group commit.
    const where = ["key_hash = $1", "(escrow_tx IS NOT NULL OR status <> 'failed')"];
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
    return result.rows.map((row) => this.overlaid(row));
  }

  /**
   * Settled rows whose settlement is not known final yet (docs/DESIGN.md "Finality"), oldest first: the sweeper
   * checks each once its settlement is `depth` blocks deep, and revisits those a reorg took the settlement from.
   */
  async listUnfinal(limit: number): Promise<GatewayJobRow[]> {
    const result = await this.pool.query<GatewayJobRow>(
      "SELECT * FROM gateway_job WHERE status = 'settled' AND NOT final ORDER BY job_id LIMIT $1",
      [limit],
    );
    return result.rows.map((row) => this.overlaid(row)).filter((row) => row.status === "settled" && !row.final);
  }

  /** Jobs not yet final (recovery and the sweeper). */
  /** Those of `jobIds` without a row: none in the table, and none on its way from this process. */
  async withoutRows(jobIds: readonly string[]): Promise<string[]> {
    if (jobIds.length === 0) return [];
    // Taken before the read: an insert committed while it runs is in neither its snapshot nor the set after it.
    const onTheirWay = new Set(this.inserting);
    const result = await this.pool.query<{ job_id: string }>(
      `SELECT t.id AS job_id FROM unnest($1::text[]) AS t(id)
       WHERE NOT EXISTS (SELECT 1 FROM gateway_job j WHERE j.job_id = t.id)`,
      [jobIds],
    );
    return result.rows.map((row) => row.job_id).filter((jobId) => !onTheirWay.has(jobId));
  }

  async listOpen(): Promise<GatewayJobRow[]> {
    const result = await this.pool.query<GatewayJobRow>(
      "SELECT * FROM gateway_job WHERE status IN ('pending', 'processing', 'settling') ORDER BY job_id",
    );
    return result.rows
      .map((row) => this.overlaid(row))
      .filter((row) => row.status === "pending" || row.status === "processing" || row.status === "settling");
  }
}

interface Statement {
  text: string;
  values: unknown[];
  /** The compare-and-set writes it makes (the rows it returns are the jobs moved). */
  moves: MoveWrite[];
}

function definedOf(patch: JobPatch): JobPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as JobPatch;
}

/** Later columns over earlier ones, as writing them one after the other would leave the row; but the first
 *  `processing_at` stays (the store never moves a set one). */
function mergeInto(into: JobPatch, later: JobPatch): JobPatch {
  const { processing_at: processingAt, ...rest } = later;
  Object.assign(into, rest);
  if (processingAt !== undefined && into.processing_at === undefined) into.processing_at = processingAt;
  return into;
}

/**
 * A job's held items in the order they were made, as writes: consecutive moves collapse into one compare-and-set
 * while that changes no outcome (`collapses`), facts fold into the write of the move around them, and facts
 * without any move are one patch.
 */
function writesOf(jobId: string, items: HeldItem[]): Pending[] {
  const writes: Pending[] = [];
  let current: MoveWrite | undefined;
  let facts: JobPatch = {};
  for (const item of items) {
    if (item.kind === "facts") {
      if (current) {
        mergeInto(current.patch, item.patch);
        mergeInto(current.facts, item.patch);
      } else mergeInto(facts, item.patch);
    } else if (current && collapses(current, item)) {
      current.to = item.to;
      mergeInto(current.patch, item.patch);
      current.done.push(item.done);
    } else {
      if (current) writes.push(current);
      current = {
        kind: "move",
        jobId,
        from: item.from,
        to: item.to,
        patch: mergeInto({ ...facts }, item.patch),
        facts,
        done: [item.done],
      };
      facts = {};
    }
  }
  if (current) writes.push(current);
  else if (Object.keys(facts).length > 0) writes.push({ kind: "patch", jobId, patch: facts, attempts: 0 });
  return writes;
}

/**
 * Whether `next`, made after the moves of `write`, can be one compare-and-set with them: if the row is in
 * `write.from` all of them move (`next` starts where they end), and if it is not, none does (`next` starts from
 * nowhere else). So the collapsed write is made exactly when the moves one after the other would all be.
 */
function collapses(write: MoveWrite, next: Move): boolean {
  return next.from.includes(write.to) && next.from.every((status) => write.from.includes(status));
}

/** Columns of a patch as the table reads them back (bigint columns come back as strings). */
function applyTo(row: GatewayJobRow, patch: JobPatch): void {
  const target = row as unknown as Record<string, unknown>;
  for (const [column, value] of Object.entries(patch) as [keyof JobPatch, unknown][]) {
    if (column === "processing_at" && row.processing_at !== null) continue;
    target[column] =
      typeof value === "bigint" || (COLUMN_TYPES[column] === "bigint" && typeof value === "number")
        ? String(value)
        : value;
  }
}

function sqlValue(column: keyof JobPatch, value: unknown): unknown {
  if (value === null) return null;
  if (column === "receipt") return JSON.stringify(value);
  return typeof value === "bigint" ? value.toString() : value;
}

/**
 * The statements of a group: rounds that each hold at most one write per job (a job's second write goes to the
 * next round, so order is kept), and in each round one statement per kind of write (inserts; facts or moves with
 * the same target and columns).
 */
function statementsOf(group: Pending[]): Statement[] {
  const statements: Statement[] = [];
  let rest = group;
  while (rest.length > 0) {
    const round: Pending[] = [];
    const later: Pending[] = [];
    const seen = new Set<string>();
    for (const item of rest) {
      if (seen.has(item.jobId)) later.push(item);
      else {
        seen.add(item.jobId);
        round.push(item);
      }
    }
    const inserts = round.flatMap((item) => (item.kind === "insert" ? [item.job] : []));
    if (inserts.length > 0) statements.push(insertStatement(inserts));
    const updates = new Map<string, Exclude<Pending, { kind: "insert" }>[]>();
    for (const item of round) {
      if (item.kind === "insert") continue;
      const key = `${item.kind === "move" ? item.to : ""}|${Object.keys(item.patch).sort().join(",")}`;
      updates.set(key, [...(updates.get(key) ?? []), item]);
    }
    for (const items of updates.values()) statements.push(updateStatement(items));
    rest = later;
  }
  return statements;
}

function insertStatement(jobs: NewGatewayJob[]): Statement {
  return {
    text: `INSERT INTO gateway_job (job_id, job_key, wallet, key_hash, model, tier, status, stream, max_tokens, credits_locked, prompt_tokens)
           SELECT u.job_id, u.job_key, u.wallet, u.key_hash, u.model, u.tier, 'pending', u.stream, u.max_tokens, u.credits_locked, u.prompt_tokens
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::integer[], $9::bigint[], $10::integer[])
             AS u(job_id, job_key, wallet, key_hash, model, tier, stream, max_tokens, credits_locked, prompt_tokens)`,
    values: [
      pgArray(jobs.map((job) => job.jobId)),
      pgArray(jobs.map((job) => job.jobKey)),
      pgArray(jobs.map((job) => job.wallet.toLowerCase())),
      pgArray(jobs.map((job) => job.keyHash.toLowerCase())),
      pgArray(jobs.map((job) => job.model)),
      pgArray(jobs.map((job) => job.tier)),
      pgArray(jobs.map((job) => job.stream)),
      pgArray(jobs.map((job) => job.maxTokens)),
      pgArray(jobs.map((job) => String(job.creditsLocked))),
      pgArray(jobs.map((job) => job.promptTokens)),
    ],
    moves: [],
  };
}

/** Facts, or a compare-and-set move, for many jobs in one statement (all items share the target and columns). */
function updateStatement(items: Exclude<Pending, { kind: "insert" }>[]): Statement {
  const first = items[0]!;
  const columns = Object.keys(first.patch).sort() as (keyof JobPatch)[];
  const sorted = [...items].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  const values: unknown[] = [pgArray(sorted.map((item) => item.jobId))];
  const arrays = ["$1::text[]"];
  const names = ["job_id"];
  const sets: string[] = [];
  if (first.kind === "move") {
    values.push(pgArray(sorted.map((item) => (item.kind === "move" ? item.from.join(",") : ""))));
    arrays.push(`$${values.length}::text[]`);
    names.push("from_statuses");
    values.push(first.to);
    sets.push(`status = $${values.length}`);
  }
  columns.forEach((column, i) => {
    const type = COLUMN_TYPES[column];
    values.push(pgArray(sorted.map((item) => sqlValue(column, item.patch[column]))));
    // jsonb travels as text: an array of JSON documents is not a literal node-postgres writes.
    arrays.push(`$${values.length}::${type === "jsonb" ? "text" : type}[]`);
    names.push(`c${i}`);
    const value = type === "jsonb" ? `u.c${i}::jsonb` : `u.c${i}`;
    sets.push(column === "processing_at" ? `${column} = COALESCE(j.${column}, ${value})` : `${column} = ${value}`);
  });
  sets.push("updated_at = now()");
  const cas = first.kind === "move" ? " AND j.status = ANY(string_to_array(u.from_statuses, ','))" : "";
  return {
    text: `UPDATE gateway_job j SET ${sets.join(", ")}
           FROM unnest(${arrays.join(", ")}) AS u(${names.join(", ")})
           WHERE j.job_id = u.job_id${cas} RETURNING j.job_id`,
    values,
    moves: sorted.flatMap((item) => (item.kind === "move" ? [item] : [])),
  };
}
