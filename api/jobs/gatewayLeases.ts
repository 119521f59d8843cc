import type { Logger } from "pino";
import type pg from "pg";
import type { Hex } from "viem";
import type { EscrowChain } from "../chain/escrowChain.js";
import type { JobLifecycle } from "./jobLifecycle.js";
import type { GatewayJobRow } from "./jobStore.js";

export interface GatewayLeaseOptions {
  gatewayId: string;
  /** Lowercase 0x address of this gateway's signer (recorded for operators). */
  signer: string;
  /** A lease not renewed for this long counts as dead. */
  ttlMs: number;
  /** Renewal period (also how often expired peers are looked for); well below `ttlMs`. */
  heartbeatMs: number;
  logger: Logger;
}

export type OwnedRow = Pick<GatewayJobRow, "job_id"> & { gateway_id?: string | null };

/** What taking over a dead peer's jobs uses: the lifecycle closes them, the chain says how they stand. */
export interface TakeOverDeps {
  lifecycle: Pick<JobLifecycle, "finishFromStoredReceipt" | "returnEscrow">;
  chain: Pick<EscrowChain, "jobOf" | "latestBlockTimestamp">;
  /** Jobs this process is closing or running (the sweeper leaves them alone). */
  activeJobs: Set<string>;
  logger: Logger;
}

/**
 * Leases of the gateway processes sharing one database (docs/DESIGN.md, "Several gateways"). Each process renews
 * its own lease; on each heartbeat it also looks for peers whose lease expired (SIGKILL, a lost host, a graceful
 * shutdown that released it) and takes over their unfinished jobs: a stored verified receipt is settled, otherwise
 * the escrow goes back (failJob before the chain deadline, refund after). The take-over is one UPDATE moving the
 * owner column to this gateway, so with several live gateways each orphaned job has exactly one new owner; the
 * chain refuses a second close of a job anyway (JobNotInStatus), so even a gateway wrongly presumed dead cannot
 * make a job settle or refund twice.
 */
export class GatewayLeases {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private takingOver: Promise<unknown> | undefined;
  private deps: TakeOverDeps | undefined;

  constructor(
    private readonly pool: pg.Pool,
    readonly options: GatewayLeaseOptions,
  ) {
    // A lease renewed less often than it lasts would lapse while its gateway is alive.
    if (options.heartbeatMs >= options.ttlMs)
      throw new Error("GATEWAY_HEARTBEAT_MS must be below GATEWAY_LEASE_TTL_MS");
  }

  get gatewayId(): string {
    return this.options.gatewayId;
  }

  /** Whether this gateway may close `row` now: its own job, or one written without an owner. */
  mayClose(row: OwnedRow): boolean {
    return row.gateway_id === undefined || row.gateway_id === null || row.gateway_id === this.options.gatewayId;
  }

  /** The signers of every gateway that ever held a lease on this database, this one's included (lowercase). */
  async signers(): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ signer: string }>("SELECT DISTINCT signer FROM gateway_lease");
    return new Set([this.options.signer.toLowerCase(), ...rows.map((row) => row.signer.toLowerCase())]);
  }

  /** Takes (or renews) the lease, then renews it and looks for dead peers every heartbeat. */
  async start(deps: TakeOverDeps): Promise<void> {
    this.deps = deps;
    await this.renew();
    this.timer = setInterval(() => {
      this.running ??= this.beat().finally(() => {
        this.running = undefined;
      });
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Stops renewing; with `release`, marks the lease expired so a peer takes the jobs left open at once. */
  async stop({ release }: { release: boolean }): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.takingOver;
    if (!release) return;
    await this.pool
      .query("UPDATE gateway_lease SET expires_at = now(), released_at = now() WHERE gateway_id = $1", [
        this.options.gatewayId,
      ])
      .catch((error: unknown) => this.options.logger.warn({ err: error }, "releasing the gateway lease failed"));
  }

  async renew(): Promise<void> {
    await this.pool.query(
      `INSERT INTO gateway_lease (gateway_id, signer, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
       ON CONFLICT (gateway_id) DO UPDATE SET signer = EXCLUDED.signer, heartbeat_at = now(),
         expires_at = EXCLUDED.expires_at, released_at = NULL`,
      [this.options.gatewayId, this.options.signer, this.options.ttlMs],
    );
  }

  /**
   * Moves the open jobs of every gateway whose lease expired to this one and returns them. Rows are re-checked
   * under their row lock (READ COMMITTED re-evaluates the WHERE on the latest version), so a job another live
   * gateway took a moment earlier is not taken again.
   */
  async claimOrphans(): Promise<(GatewayJobRow & { previous_owner: string })[]> {
    const { rows } = await this.pool.query<GatewayJobRow & { previous_owner: string }>(
      `WITH dead AS (
         SELECT gateway_id FROM gateway_lease WHERE expires_at < now() AND gateway_id <> $1
       ), taken AS (
         SELECT j.job_id, j.gateway_id AS previous_owner FROM gateway_job j JOIN dead USING (gateway_id)
         WHERE j.status IN ('pending', 'processing', 'settling')
         FOR UPDATE OF j SKIP LOCKED
       )
       UPDATE gateway_job j SET gateway_id = $1, updated_at = now() FROM taken
       WHERE j.job_id = taken.job_id AND j.gateway_id = taken.previous_owner
       RETURNING j.*, taken.previous_owner`,
      [this.options.gatewayId],
    );
    return rows;
  }

  private async beat(): Promise<void> {
    try {
      await this.renew();
    } catch (error) {
      this.options.logger.warn({ err: error }, "renewing the gateway lease failed");
      return;
    }
    // Closing taken jobs waits for transactions to be mined; it runs beside the heartbeat, never delaying a
    // renewal (a late renewal would let a peer take this gateway's own jobs).
    if (this.deps && !this.takingOver) {
      this.takingOver = takeOverOrphanedJobs(this.deps, this)
        .catch(() => undefined)
        .finally(() => {
          this.takingOver = undefined;
        });
    }
  }
}

/**
 * Claims the open jobs of dead gateways and closes each one whose escrow is open on chain. Jobs in any other chain
 * state (never opened yet, already closed) are now this gateway's and the regular sweep (sweepJobs.ts) records or
 * closes them with its usual graces. Returns the number of jobs taken over.
 */
export async function takeOverOrphanedJobs(
  deps: TakeOverDeps,
  leases: Pick<GatewayLeases, "claimOrphans">,
): Promise<number> {
  let rows: Awaited<ReturnType<GatewayLeases["claimOrphans"]>>;
  try {
    rows = await leases.claimOrphans();
  } catch (error) {
    deps.logger.warn({ err: error }, "looking for jobs of dead gateways failed");
    return 0;
  }
  if (rows.length === 0) return 0;
  const owners = [...new Set(rows.map((row) => row.previous_owner))];
  deps.logger.warn({ jobs: rows.length, from: owners }, "taking over the jobs of gateways whose lease expired");
  await Promise.all(
    rows.map(async (row) => {
      // While it is being closed here the periodic sweep of this process leaves it alone.
      deps.activeJobs.add(row.job_id);
      try {
        await closeOrphan(deps, row);
      } catch (error) {
        deps.logger.error({ err: error, job_id: row.job_id }, "taking over a job failed; left to the sweeper");
      } finally {
        deps.activeJobs.delete(row.job_id);
      }
    }),
  );
  return rows.length;
}

/** What a take-over does with one orphaned job, from its row and the chain's view of it. */
export type OrphanAction = "settle" | "fail" | "refund" | "leave";

/**
 * The take-over rule: only a job open on chain is closed here. A stored verified receipt is settled (the work was
 * done and the client got it); without one the escrow goes back: `fail` while the chain deadline has not passed
 * (only a gateway may, and it is immediate), `refund` after it. Anything else is left to the regular sweep.
 */
export function orphanAction(
  row: { receipt: unknown; signature: string | null },
  onChain: { status: string; deadline: bigint },
  chainNow: bigint,
): OrphanAction {
  if (onChain.status !== "open") return "leave";
  if (row.receipt && row.signature) return "settle";
  return chainNow <= onChain.deadline ? "fail" : "refund";
}

async function closeOrphan(deps: TakeOverDeps, row: GatewayJobRow & { previous_owner: string }): Promise<void> {
  const lifecycle = deps.lifecycle;
  const onChain = await deps.chain.jobOf(row.job_key as Hex);
  const chainNow = await deps.chain.latestBlockTimestamp().catch(() => BigInt(Math.floor(Date.now() / 1000)));
  switch (orphanAction(row, onChain, chainNow)) {
    case "leave":
      return;
    case "settle":
      deps.logger.info({ job_id: row.job_id, from: row.previous_owner }, "take-over: settling the stored receipt");
      // The owner is gone: nobody else is retrying this row, so it is claimed at once.
      await lifecycle.finishFromStoredReceipt(row, 0);
      return;
    case "fail":
    case "refund":
      await lifecycle.returnEscrow(row, `gateway ${row.previous_owner} stopped before the job completed`, {
        deadline: onChain.deadline,
        now: chainNow,
      });
  }
}
