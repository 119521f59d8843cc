import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import type pg from "pg";
import { keccak256, toHex, type Hex } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findFreePort } from "../../scripts/stack/ports.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import type { ChainJobStatus } from "@credit-metered/client";
import type { Receipt } from "../chain/receiptTypes.js";
import { createPool } from "../db/createPool.js";
import { migrate } from "../db/migrate.js";
import {
  JOB_TRANSITIONS,
  JobLifecycle,
  canMove,
  type JobChainActions,
  type JobLifecycleOptions,
  type MinedSettlement,
  type SettlementHandle,
} from "./jobLifecycle.js";
import {
  JobStore,
  type GatewayJobRow,
  type GatewayJobStatus,
  type JobStoreOptions,
  type NewGatewayJob,
} from "./jobStore.js";
import { PROCESSING_CURSOR_NAME, ingestProcessingJobs } from "../webhooks/ingestProcessingJobs.js";
import { concludeJob } from "../completions/concludeJob.js";
import type { OpenedJob } from "../completions/openEscrow.js";
import type { PreparedCompletion } from "../completions/prepareCompletion.js";
import type { RelayOutcome } from "../completions/relayCompletion.js";
import { ApiError } from "../errors/ApiError.js";

/** A custom-error revert of the in-memory escrow (what `revertOf` decodes from a real one). */
class EscrowRevert extends Error {
  constructor(readonly errorName: string) {
    super(`reverted: ${errorName}`);
  }
}

/**
 * Test double of the chain actions (`JobChainActions`): an in-memory escrow with the real contract's rules that
 * matter here — a job leaves `open` once; refund only after the deadline — and a log of every action sent.
 */
/** The hash of the block the in-memory chain mines settlements in. */
const BLOCK_7: Hex = `0x${"b7".repeat(32)}`;

class InMemoryEscrowChain implements JobChainActions {
  readonly jobs = new Map<Hex, { status: ChainJobStatus; deadline: bigint }>();
  readonly sent: { action: "settle" | "failJob" | "refund"; jobKey: Hex }[] = [];
  now = 1_000n;
  /** When set, every settlement is refused with this custom error. */
  refuseSettlementWith: string | undefined;
  /** When set, the next failJob is never sent (the node is unreachable). */
  unreachableOnce = false;
  /** Refunds refused `JobNotExpired` although the deadline passed (block time trailing the wall clock). */
  earlyRefusals = 0;
  /** With `earlyRefusals`: another sender (the sweeper) refunds the job while the gateway's refund is refused. */
  refundedByOthersMeanwhile = false;
  /** When set, failJob waits for it (a slow node): what the close wrote before any chain answer can be read. */
  failJobGate: Promise<void> | undefined;
  readonly refundTx = new Map<Hex, Hex>();
  private nonce = 0;

  open(jobKey: Hex, deadline = this.now + 120n): void {
    this.jobs.set(jobKey, { status: "open", deadline });
  }

  statusOf(jobKey: Hex): ChainJobStatus {
    return this.jobs.get(jobKey)?.status ?? "none";
  }

  count(action: "settle" | "failJob" | "refund", jobKey: Hex): number {
    return this.sent.filter((s) => s.action === action && s.jobKey === jobKey).length;
  }

  async failJob(jobKey: Hex): Promise<Hex> {
    await Promise.resolve();
    if (this.failJobGate) await this.failJobGate;
    if (this.unreachableOnce) {
      this.unreachableOnce = false;
      throw new Error("connect ECONNREFUSED");
    }
    this.sent.push({ action: "failJob", jobKey });
    this.close(jobKey, "failed");
    return this.hash();
  }

  async refund(jobKey: Hex): Promise<Hex> {
    await Promise.resolve();
    const job = this.jobs.get(jobKey);
    if (job && this.now <= job.deadline) throw new EscrowRevert("JobNotExpired");
    if (this.earlyRefusals > 0) {
      // The chain's block time still trails the deadline the gateway waited for.
      this.earlyRefusals--;
      if (this.refundedByOthersMeanwhile) this.refundAs(jobKey);
      throw new EscrowRevert("JobNotExpired");
    }
    if (job && job.status !== "open") throw new EscrowRevert("JobNotInStatus");
    this.sent.push({ action: "refund", jobKey });
    return this.refundAs(jobKey);
  }

  async refundTxOf(jobKey: Hex): Promise<Hex | undefined> {
    return this.refundTx.get(jobKey);
  }

  /** Closes the job refunded; the hash of the transaction that did it. */
  refundAs(jobKey: Hex): Hex {
    this.close(jobKey, "refunded");
    const hash = this.hash();
    this.refundTx.set(jobKey, hash);
    return hash;
  }

  async waitMined(): Promise<void> {}

  /** The canonical head, for finality checks: by default the block settlements are mined in (7). */
  head = 7n;
  /** Reads of the head so far. */
  headReads = 0;

  async headBlock(): Promise<bigint> {
    this.headReads += 1;
    return this.head;
  }

  settle(receipt: Receipt): SettlementHandle {
    const jobKey = receipt.jobId as Hex;
    this.sent.push({ action: "settle", jobKey });
    const hash = this.hash();
    const mined = (async (): Promise<MinedSettlement> => {
      await Promise.resolve();
      if (this.refuseSettlementWith) throw new EscrowRevert(this.refuseSettlementWith);
      this.close(jobKey, "settled");
      return {
        hash,
        blockNumber: 7n,
        ...(this.canonicalBlocks ? { blockHash: BLOCK_7 } : {}),
        creditsCharged: BigInt(receipt.completionTokens),
      };
    })();
    mined.catch(() => undefined);
    return { submitted: Promise.resolve(hash), mined };
  }

  /** The jobOf reads made (finality from a settlement's block needs none). */
  jobOfReads = 0;
  /** When set, settlements carry their block's hash and the chain answers block hashes from here (the canonical
   *  chain); unset, finality is read with jobOf as a chain without block facts gives it. */
  canonicalBlocks: Map<bigint, Hex> | undefined;
  blockHashAt?: (blockNumber: bigint) => Promise<Hex | undefined>;

  withBlocks(): void {
    this.canonicalBlocks = new Map([[7n, BLOCK_7]]);
    this.blockHashAt = async (blockNumber) => this.canonicalBlocks?.get(blockNumber);
  }

  async jobOf(jobKey: Hex): Promise<{ status: ChainJobStatus; deadline: bigint }> {
    this.jobOfReads++;
    return this.jobs.get(jobKey) ?? { status: "none", deadline: 0n };
  }

  async waitForDeadline(deadline: bigint): Promise<void> {
    if (this.now <= deadline) this.now = deadline + 1n;
  }

  refusalOf(error: unknown): string | undefined {
    return error instanceof EscrowRevert ? error.errorName : undefined;
  }

  private close(jobKey: Hex, status: ChainJobStatus): void {
    const job = this.jobs.get(jobKey);
    if (!job || job.status !== "open") throw new EscrowRevert("JobNotInStatus");
    job.status = status;
  }

  private hash(): Hex {
    return keccak256(toHex(`tx-${++this.nonce}`));
  }
}

const STATES = Object.keys(JOB_TRANSITIONS) as GatewayJobStatus[];
const EDGES = STATES.flatMap((from) => JOB_TRANSITIONS[from].map((to) => [from, to] as const));
const NON_EDGES = STATES.flatMap((from) => STATES.filter((to) => !canMove(from, to)).map((to) => [from, to] as const));
const WORKER: Hex = "0x00000000000000000000000000000000000000aa";
const SCHEMA = `lifecycle_test_${process.pid}`;

let server: RunningPostgres;
let stateDir: string;
let pools: pg.Pool[] = [];
let store: JobStore;
/** Every gateway's store: a row is read after their group commits (side facts are written with the tick). */
const stores: JobStore[] = [];
let chain: InMemoryEscrowChain;
let logLines: { msg: string; from?: string; to?: string }[];
let sequence = 0;

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(tmpdir(), "job-lifecycle-"));
  // The real database the gateway uses; DATABASE_URL (CI) or an embedded server on a free port.
  server = await startPostgres({ stateDir, port: await findFreePort(11060, 11099), database: "lifecycle" });
  const pool = createPool(server.databaseUrl, SCHEMA, 4);
  await migrate(pool, SCHEMA);
  pools.push(pool);
  store = new JobStore(pool);
});

afterAll(async () => {
  await pools[0]?.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await Promise.all(pools.map((pool) => pool.end()));
  pools = [];
  await server?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

beforeEach(() => {
  chain = new InMemoryEscrowChain();
  logLines = [];
});

/** One gateway process: its own pool (its own connections) on the shared database, the shared chain. */
function gateway(overrides: Partial<JobLifecycleOptions> = {}, storeOptions: JobStoreOptions = {}): JobLifecycle {
  const pool = createPool(server.databaseUrl, SCHEMA, 4);
  pools.push(pool);
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as (typeof logLines)[number]);
      done();
    },
  });
  const jobs = new JobStore(pool, storeOptions);
  stores.push(jobs);
  return new JobLifecycle({
    jobs,
    chain,
    logger: pino({ level: "debug" }, sink),
    gatewayTimeoutMs: 120_000,
    chainTimeoutMs: 120_000,
    settlementRetryAfterMs: 30_000,
    unsentGraceMs: 30_000,
    unminedGraceMs: 300_000,
    // The in-memory chain's head moves only when a test moves it: nothing to wait for.
    finalWaitMs: 0,
    ...overrides,
  });
}

/** A job row in `status` whose escrow is open on the in-memory chain. */
/** A new job's row as openEscrow inserts it. */
function newRow(jobId: string): NewGatewayJob {
  return {
    jobId,
    jobKey: keccak256(toHex(jobId)),
    wallet: "0x00000000000000000000000000000000000000bb",
    keyHash: keccak256(toHex("key")),
    model: "test-model",
    tier: "standard",
    stream: false,
    maxTokens: 64,
    creditsLocked: 1_000,
    promptTokens: 5,
  };
}

async function jobIn(
  status: GatewayJobStatus,
  open = true,
): Promise<{ jobId: string; jobKey: Hex; deadline: bigint; lockConfirmed: boolean }> {
  const jobId = `job_${process.pid}_${++sequence}`;
  const jobKey = keccak256(toHex(jobId));
  await store.insert(newRow(jobId));
  await store.update(jobId, { escrow_tx: keccak256(toHex(`open-${jobId}`)) });
  await store.flush();
  // Test setup only: put the row where the test starts (the lifecycle would need a chain history to get there).
  await pools[0]!.query("UPDATE gateway_job SET status = $2 WHERE job_id = $1", [jobId, status]);
  if (open) chain.open(jobKey);
  // A live request's view: the gateway saw the lock mined (the tests of a close before that say so).
  return { jobId, jobKey, deadline: chain.now + 120n, lockConfirmed: true };
}

function receiptFor(jobKey: Hex, completionTokens = 3): Receipt {
  return {
    jobId: jobKey,
    outputHash: keccak256(toHex("output")),
    promptTokens: 5,
    completionTokens,
    finalTokenAt: 1_700_000_000,
  };
}

const SIGNATURE: Hex = `0x${"11".repeat(65)}`;

async function row(jobId: string): Promise<GatewayJobRow> {
  await Promise.all(stores.map((jobs) => jobs.flush()));
  const found = await store.get(jobId);
  if (!found) throw new Error(`no row ${jobId}`);
  return found;
}

/** Polls until the row reaches `status` (a settlement is recorded after it is mined, in the background). */
async function eventually(jobId: string, status: GatewayJobStatus): Promise<GatewayJobRow> {
  for (let i = 0; i < 200; i++) {
    const current = await row(jobId);
    if (current.status === status) return current;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return row(jobId);
}

/** The row once the table has it settled, read without flushing any store (a flush would write the held move to
 *  `settled` before `final` could join it). */
async function settledInTable(jobId: string): Promise<GatewayJobRow | undefined> {
  let found: GatewayJobRow | undefined;
  for (let i = 0; i < 300 && found?.status !== "settled"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const { rows } = await pools[0]!.query<GatewayJobRow>("SELECT * FROM gateway_job WHERE job_id = $1", [jobId]);
    found = rows[0];
  }
  return found;
}

/** The row as the table has it now, without flushing any store. */
async function tableRow(jobId: string): Promise<GatewayJobRow> {
  const { rows } = await pools[0]!.query<GatewayJobRow>("SELECT * FROM gateway_job WHERE job_id = $1", [jobId]);
  return rows[0]!;
}

/** Polls the table (no store flushed) until its row of `jobId` is `done`, for up to 4 s. */
async function untilTable(jobId: string, done: (row: GatewayJobRow) => boolean): Promise<GatewayJobRow> {
  for (let i = 0; i < 400; i++) {
    const current = await tableRow(jobId);
    if (done(current)) return current;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`row ${jobId} never got there`);
}

/** A job left `settling` with its receipt: the first settlement was refused with `refusal`, a while ago. */
async function leftSettling(refusal: string): Promise<{ jobId: string; jobKey: Hex; deadline: bigint }> {
  const job = await jobIn("processing");
  chain.refuseSettlementWith = refusal;
  const conclusion = await gateway().conclude(job, {
    kind: "receipt",
    receipt: receiptFor(job.jobKey),
    signature: SIGNATURE,
    worker: WORKER,
  });
  if (conclusion.kind === "settling") await conclusion.settlement.mined.catch(() => undefined);
  chain.refuseSettlementWith = undefined;
  // The sent transaction is recorded in the background: wait for it before making the row look old.
  for (let i = 0; i < 200 && (await row(job.jobId)).settlement_tx === null; i++)
    await new Promise((resolve) => setTimeout(resolve, 25));
  await pools[0]!.query("UPDATE gateway_job SET updated_at = now() - interval '1 minute' WHERE job_id = $1", [
    job.jobId,
  ]);
  return job;
}

describe("the transition table", () => {
  it.each(EDGES)("moves a job from %s to %s", async (from, to) => {
    const lifecycle = gateway();
    const job = await jobIn(from);

    expect(await lifecycle.move(job.jobId, to)).toEqual({ moved: true });
    expect((await row(job.jobId)).status).toBe(to);
  });

  it.each(NON_EDGES)("refuses to move a job from %s to %s and leaves it as it was", async (from, to) => {
    const lifecycle = gateway();
    const job = await jobIn(from);

    expect(await lifecycle.move(job.jobId, to)).toEqual({ moved: false, current: from });
    expect((await row(job.jobId)).status).toBe(from);
  });

  it("logs a refused illegal transition", async () => {
    const lifecycle = gateway();
    const job = await jobIn("refunded");

    await lifecycle.move(job.jobId, "settling");

    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: "transition refused: the job already moved", from: "refunded", to: "settling" }),
    );
  });

  it("refuses a requested source that has no edge to the target", async () => {
    const lifecycle = gateway();
    const job = await jobIn("failed");

    expect(await lifecycle.move(job.jobId, "settled", {}, ["failed"])).toEqual({ moved: false, current: "failed" });
    expect(logLines).toContainEqual(expect.objectContaining({ msg: "illegal transition requested; refused" }));
  });
});

describe("a live request", () => {
  it("marks a job processing when a worker acknowledges it", async () => {
    const job = await jobIn("pending");

    await gateway().acknowledged(job.jobId, WORKER);

    const after = await row(job.jobId);
    expect(after.status).toBe("processing");
    expect(after.worker).toBe(WORKER);
    expect(after.processing_at).not.toBeNull();
  });

  it("keeps the first acknowledgement's time when another worker takes over after a failover", async () => {
    const job = await jobIn("pending");
    const lifecycle = gateway();
    await lifecycle.acknowledged(job.jobId, WORKER);
    const first = (await row(job.jobId)).processing_at;

    await lifecycle.acknowledged(job.jobId, "0x00000000000000000000000000000000000000cc");

    const after = await row(job.jobId);
    expect(after.worker).toBe("0x00000000000000000000000000000000000000cc");
    expect(after.processing_at).toEqual(first);
  });

  it("refuses an acknowledgement for a job already closed", async () => {
    const job = await jobIn("failed");

    expect(await gateway().acknowledged(job.jobId, WORKER)).toEqual({ moved: false, current: "failed" });
    expect((await row(job.jobId)).processing_at).toBeNull();
  });

  it("marks a job closed before its lock was mined (the chain has no job yet), in the table within a tick", async () => {
    const job = await jobIn("processing", false);
    // A hold bound far beyond the wait below: only writing the mark with the next tick puts it in the table in time.
    const conclusion = await gateway({}, { holdMs: 60_000 }).conclude(job, { kind: "failed", reason: "client gone" });
    expect(conclusion.kind).toBe("closed");
    // Polled, not slept: a fixed 300 ms wait failed on a loaded host; 4 s is still far inside the hold bound.
    const written = await untilTable(job.jobId, (row) => row.status === "failed" && row.closed_before_lock);
    expect([written.status, written.closed_before_lock]).toEqual(["failed", true]);
  });

  it("marks a job ended before the gateway saw its lock mined in the close's own write, before any chain call", async () => {
    const job = { ...(await jobIn("processing")), lockConfirmed: false };
    // The lock landed but its receipt had not reached the gateway: failJob goes through, and the row was marked by
    // the move itself (no tick needed), so a JobOpened ingested right after the close is never announced.
    const slowNode = Promise.withResolvers<void>();
    chain.failJobGate = slowNode.promise;
    const closing = gateway({}, { holdMs: 60_000 }).conclude(job, { kind: "failed", reason: "client gone" });
    try {
      let marked: GatewayJobRow | undefined;
      for (let i = 0; i < 200 && marked?.status !== "failed"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        const { rows } = await pools[0]!.query<GatewayJobRow>("SELECT * FROM gateway_job WHERE job_id = $1", [
          job.jobId,
        ]);
        marked = rows[0];
      }
      expect([marked?.status, marked?.closed_before_lock, marked?.fail_tx]).toEqual(["failed", true, null]);
    } finally {
      chain.failJobGate = undefined;
      slowNode.resolve();
    }
    expect((await closing).kind).toBe("closed");
  });

  it("does not mark a job whose failJob found it already closed on chain (someone else closed it)", async () => {
    const job = await jobIn("processing");
    chain.refundAs(job.jobKey);
    await gateway().conclude(job, { kind: "failed", reason: "client gone" });
    const after = await row(job.jobId);
    expect([after.status, after.closed_before_lock]).toEqual(["failed", false]);
  });

  it("stores a verified receipt with the move to settling and records the mined settlement", async () => {
    const job = await jobIn("processing");
    const receipt = receiptFor(job.jobKey, 3);

    const conclusion = await gateway().conclude(job, {
      kind: "receipt",
      receipt,
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(conclusion.kind).toBe("settling");
    const settling = await row(job.jobId);
    expect(settling.receipt).toEqual(receipt);
    const settled = await eventually(job.jobId, "settled");
    expect(settled.status).toBe("settled");
    expect(settled.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settled.credits_charged).toBe("3");
    expect(chain.statusOf(job.jobKey)).toBe("settled");
  });

  it("returns the escrow with failJob when the job failed", async () => {
    const job = await jobIn("processing");

    const conclusion = await gateway().conclude(job, { kind: "failed", reason: "worker failed after 2 tokens" });

    expect(conclusion).toMatchObject({ kind: "closed", status: "failed" });
    const after = await row(job.jobId);
    expect(after.status).toBe("failed");
    expect(after.fail_tx).toMatch(/^0x/);
    expect(after.error).toBe("worker failed after 2 tokens");
    expect(chain.statusOf(job.jobKey)).toBe("failed");
  });

  it("refunds a timed-out job after the chain deadline", async () => {
    const job = await jobIn("processing");

    const conclusion = await gateway().conclude(job, { kind: "timed_out" });

    expect(conclusion).toMatchObject({ kind: "closed", status: "refunded" });
    const after = await row(job.jobId);
    expect(after.status).toBe("refunded");
    expect(after.timed_out).toBe(true);
    expect(after.refund_tx).toMatch(/^0x/);
    expect(chain.statusOf(job.jobKey)).toBe("refunded");
  });

  it("reports the refund that went through when the chain first refuses it as early (JobNotExpired)", async () => {
    const job = await jobIn("processing");
    chain.earlyRefusals = 2;

    const conclusion = await gateway({ refundRetryMs: 10 }).conclude(job, { kind: "timed_out" });

    const refundTx = chain.refundTx.get(job.jobKey);
    expect(refundTx).toMatch(/^0x/);
    expect(conclusion).toEqual({ kind: "closed", status: "refunded", tx: refundTx });
    expect((await row(job.jobId)).refund_tx).toBe(refundTx);
  });

  it("reports the other sender's refund transaction when the sweeper refunded the job first", async () => {
    const job = await jobIn("processing");
    chain.earlyRefusals = 1;
    chain.refundedByOthersMeanwhile = true;

    const conclusion = await gateway({ refundRetryMs: 10 }).conclude(job, { kind: "timed_out" });

    const refundTx = chain.refundTx.get(job.jobKey);
    expect(chain.count("refund", job.jobKey)).toBe(0);
    expect(conclusion).toEqual({ kind: "closed", status: "refunded", tx: refundTx });
    expect((await row(job.jobId)).refund_tx).toBe(refundTx);
  });

  it("fails a timed-out job at once when the gateway's timeout is shorter than the chain's, reporting it refunded", async () => {
    const job = await jobIn("processing");

    await gateway({ gatewayTimeoutMs: 5_000 }).conclude(job, { kind: "timed_out" });

    const after = await row(job.jobId);
    expect(after.status).toBe("refunded");
    expect(after.fail_tx).toBe(after.refund_tx);
    expect(chain.statusOf(job.jobKey)).toBe("failed");
  });

  it("closes a job whose lock was refused without any chain action", async () => {
    const job = await jobIn("pending", false);

    await gateway().lockRefused(job.jobId, "openJob refused: key_revoked");

    expect((await row(job.jobId)).status).toBe("failed");
    expect(chain.sent).toEqual([]);
  });

  it("marks a settled job disputed once a dispute is mined", async () => {
    const job = await jobIn("settled");

    await gateway().disputeOpened(job.jobId);

    expect((await row(job.jobId)).status).toBe("disputed");
  });
});

describe("recovery and takeover", () => {
  it("settles a stored receipt left settling", async () => {
    const job = await leftSettling("EnforcedPause");

    await gateway().finishFromStoredReceipt(await row(job.jobId));

    expect((await eventually(job.jobId, "settled")).status).toBe("settled");
    expect(chain.statusOf(job.jobKey)).toBe("settled");
  });

  it("fails a job whose stored receipt the escrow refuses for good, returning the escrow", async () => {
    const job = await leftSettling("WorkerNotEligible");
    chain.refuseSettlementWith = "WorkerNotEligible";

    await gateway().finishFromStoredReceipt(await row(job.jobId));

    const after = await row(job.jobId);
    expect(after.status).toBe("failed");
    expect(after.error).toBe("settlement refused: WorkerNotEligible");
    expect(chain.statusOf(job.jobKey)).toBe("failed");
  });

  it("returns the escrow of a job without a receipt before its deadline with failJob", async () => {
    const job = await jobIn("processing");

    await gateway().returnEscrow(await row(job.jobId), "gateway stopped", { deadline: job.deadline, now: chain.now });

    expect((await row(job.jobId)).status).toBe("failed");
    expect(chain.statusOf(job.jobKey)).toBe("failed");
  });

  it("reads the deadline from the chain when returning an escrow without being given it", async () => {
    const job = await jobIn("pending");
    chain.jobs.set(job.jobKey, { status: "open", deadline: 1n });

    await gateway().returnEscrow(await row(job.jobId), "gateway stopped");

    expect((await row(job.jobId)).status).toBe("refunded");
    expect(chain.statusOf(job.jobKey)).toBe("refunded");
  });

  it("refunds an open job without a receipt once the chain deadline passed", async () => {
    const job = await jobIn("processing");
    chain.now = job.deadline + 1n;

    await gateway().reconcile(await row(job.jobId), chain.now);

    const after = await row(job.jobId);
    expect(after.status).toBe("refunded");
    expect(after.timed_out).toBe(true);
    expect(chain.statusOf(job.jobKey)).toBe("refunded");
  });

  it("leaves an open job without a receipt alone before its deadline", async () => {
    const job = await jobIn("processing");

    await gateway().reconcile(await row(job.jobId), chain.now);

    expect((await row(job.jobId)).status).toBe("processing");
    expect(chain.sent).toEqual([]);
  });

  it.each([
    ["settled", "settled"],
    ["failed", "failed"],
    ["refunded", "refunded"],
    ["dispute_upheld", "refunded"],
    ["disputed", "disputed"],
  ] as const)("follows the chain when it shows the job %s", async (onChain, expected) => {
    const job = await jobIn("settling");
    chain.jobs.set(job.jobKey, { status: onChain, deadline: job.deadline });

    await gateway().reconcile(await row(job.jobId), chain.now);

    expect((await row(job.jobId)).status).toBe(expected);
    expect(chain.sent).toEqual([]);
  });

  it("closes a row whose escrow was never sent once the grace has passed", async () => {
    const job = await jobIn("pending", false);
    await pools[0]!.query(
      "UPDATE gateway_job SET escrow_tx = NULL, created_at = now() - interval '1 minute' WHERE job_id = $1",
      [job.jobId],
    );

    await gateway().reconcile(await row(job.jobId), chain.now);

    const after = await row(job.jobId);
    expect(after.status).toBe("failed");
    expect(after.error).toBe("escrow never sent");
  });

  it("keeps a claimed failure closed when failJob could not be sent, and the expired escrow is refunded later", async () => {
    const job = await jobIn("processing");
    chain.unreachableOnce = true;
    const lifecycle = gateway();

    await lifecycle.conclude(job, { kind: "failed", reason: "worker failed" });
    expect((await row(job.jobId)).status).toBe("failed");
    expect(chain.statusOf(job.jobKey)).toBe("open");

    await lifecycle.refundExpired(job.jobKey, job.deadline);
    expect(chain.statusOf(job.jobKey)).toBe("refunded");
  });
});

describe("races between processes", () => {
  it("lets exactly one of two gateways settle the same job", async () => {
    const job = await jobIn("processing");
    const receipt = receiptFor(job.jobKey);

    const results = await Promise.all(
      [gateway(), gateway()].map((g) =>
        g.conclude(job, { kind: "receipt", receipt, signature: SIGNATURE, worker: WORKER }),
      ),
    );

    expect(results.map((r) => r.kind).sort()).toEqual(["already_moved", "settling"]);
    expect(chain.count("settle", job.jobKey)).toBe(1);
    expect((await eventually(job.jobId, "settled")).status).toBe("settled");
  });

  it("lets exactly one of two gateways refund the same timed-out job", async () => {
    const job = await jobIn("processing");

    const results = await Promise.all([gateway(), gateway()].map((g) => g.conclude(job, { kind: "timed_out" })));

    expect(results.map((r) => r.kind).sort()).toEqual(["already_moved", "closed"]);
    expect(chain.count("refund", job.jobKey)).toBe(1);
  });

  it("lets exactly one of a failure and a refund return the same escrow", async () => {
    const job = await jobIn("processing");

    await Promise.all([
      gateway().conclude(job, { kind: "failed", reason: "worker failed" }),
      gateway().conclude(job, { kind: "timed_out" }),
    ]);

    expect(chain.count("failJob", job.jobKey) + chain.count("refund", job.jobKey)).toBe(1);
    const after = await row(job.jobId);
    expect(after.status).toBe(chain.statusOf(job.jobKey) === "failed" ? "failed" : "refunded");
  });

  it("lets exactly one of the sweeper and a live request close an expired job, and the row agrees with the chain", async () => {
    const job = await jobIn("processing");
    chain.now = job.deadline + 1n;
    const sweeper = gateway();
    const live = gateway();
    const openRow = await row(job.jobId);

    const [fromRequest] = await Promise.all([
      live.conclude(job, { kind: "receipt", receipt: receiptFor(job.jobKey), signature: SIGNATURE, worker: WORKER }),
      sweeper.reconcile(openRow, chain.now),
    ]);

    const actions = chain.count("settle", job.jobKey) + chain.count("refund", job.jobKey);
    expect(actions).toBe(1);
    const expected = fromRequest.kind === "settling" ? "settled" : "refunded";
    expect((await eventually(job.jobId, expected)).status).toBe(expected);
    expect(chain.statusOf(job.jobKey)).toBe(expected);
  });

  it("lets exactly one of two sweepers retry a stored receipt", async () => {
    const job = await leftSettling("EnforcedPause");
    const stored = await row(job.jobId);

    await Promise.all([gateway().reconcile(stored, chain.now), gateway().reconcile(stored, chain.now)]);

    expect(chain.count("settle", job.jobKey)).toBe(2); // the first, refused attempt and one retry
    expect((await eventually(job.jobId, "settled")).status).toBe("settled");
  });
});

describe("jobs without a row (the sweep's orphan locks)", () => {
  it("names only the ids with no row in the table and no insert queued by this process", async () => {
    const written = await jobIn("processing");
    const queuedId = `job_${process.pid}_${++sequence}_queued`;
    const queued = store.insert(newRow(queuedId));
    const missing = `job_${process.pid}_${++sequence}_never_written`;
    expect(await store.withoutRows([written.jobId, queuedId, missing])).toEqual([missing]);
    await queued;
  });
});

describe("group commit of job rows (issue 26)", () => {
  it("writes the moves of many jobs queued together in one transaction", async () => {
    const jobs = await Promise.all(Array.from({ length: 20 }, () => jobIn("processing")));
    const lifecycle = gateway();
    const commits = countCommits(pools.at(-1)!);

    const conclusions = await Promise.all(
      jobs.map((job) =>
        lifecycle.conclude(job, {
          kind: "receipt",
          receipt: receiptFor(job.jobKey),
          signature: SIGNATURE,
          worker: WORKER,
        }),
      ),
    );

    expect(conclusions.every((c) => c.kind === "settling")).toBe(true);
    // The 20 moves to settling (and the settled moves that followed) took a handful of commits, not 40.
    for (const job of jobs) expect((await eventually(job.jobId, "settled")).receipt).not.toBeNull();
    expect(commits.count).toBeLessThan(10);
  });

  it("keeps a compare-and-set per row inside a group: of two gateways' groups one moves each job", async () => {
    const jobs = await Promise.all(Array.from({ length: 10 }, () => jobIn("processing")));
    const [first, second] = [gateway(), gateway()];

    const results = await Promise.all(
      jobs.flatMap((job) => [first, second].map((g) => g.conclude(job, { kind: "failed", reason: "worker gone" }))),
    );

    expect(results.filter((r) => r.kind === "closed")).toHaveLength(10);
    for (const job of jobs) expect(chain.count("failJob", job.jobKey)).toBe(1);
  });

  /** A session holding `sql`'s lock until `release` (a group stuck behind it is "being committed"). */
  async function holding(sql: string, values: unknown[] = []): Promise<{ release: () => Promise<void> }> {
    const client = await pools[0]!.connect();
    await client.query("BEGIN");
    await client.query(sql, values);
    return {
      release: async () => {
        await client.query("ROLLBACK");
        client.release();
      },
    };
  }

  const newRow = (jobId: string) => ({
    jobId,
    jobKey: keccak256(toHex(jobId)),
    wallet: "0x00000000000000000000000000000000000000bb" as Hex,
    keyHash: keccak256(toHex("key")),
    model: "test-model",
    tier: "standard" as const,
    stream: false,
    maxTokens: 64,
    creditsLocked: 1_000,
    promptTokens: 5,
  });

  it("commits a new job's row while another job's write is still being committed", async () => {
    const busy = await jobIn("processing");
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const lock = await holding("SELECT 1 FROM gateway_job WHERE job_id = $1 FOR UPDATE", [busy.jobId]);
    try {
      const stuck = lifecycle.conclude(busy, { kind: "failed", reason: "worker gone" });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const jobId = `job_${process.pid}_${++sequence}`;
      let stuckDone = false;
      void stuck.finally(() => (stuckDone = true));
      await jobs.insert(newRow(jobId));
      expect(stuckDone).toBe(false);
      expect((await tableRow(jobId)).status).toBe("pending");
    } finally {
      await lock.release();
    }
  });

  it("commits a new job's row with the next group of updates while the insert lane is still busy", async () => {
    const closing = await jobIn("processing");
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const blocked = newRow(`job_${process.pid}_${++sequence}`);
    // Another session's uncommitted row with the same id: the lane's insert of it waits for that session.
    const lock = await holding(
      `INSERT INTO gateway_job (job_id, job_key, wallet, key_hash, model, tier, status, stream, max_tokens, credits_locked)
       VALUES ($1, $2, $3, $4, 'test-model', 'standard', 'pending', false, 64, 1000)`,
      [blocked.jobId, blocked.jobKey, blocked.wallet, blocked.keyHash],
    );
    let first: Promise<void> | undefined;
    try {
      first = jobs.insert(blocked);
      first.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const jobId = `job_${process.pid}_${++sequence}`;
      const second = jobs.insert(newRow(jobId));
      const conclusion = await lifecycle.conclude(closing, { kind: "failed", reason: "worker gone" });
      await second;
      expect(conclusion.kind).toBe("closed");
      expect((await tableRow(jobId)).status).toBe("pending");
    } finally {
      await lock.release();
    }
    await first;
    expect((await tableRow(blocked.jobId)).status).toBe("pending");
  });

  it("writes a job's facts made while its insert is on its way after the insert, never lost", async () => {
    const jobs = stores.at(-1) ?? (gateway(), stores.at(-1)!);
    const jobId = `job_${process.pid}_${++sequence}`;
    // Inserts and updates alike wait for this lock: which statement reaches the row first is the store's order.
    const lock = await holding("LOCK TABLE gateway_job IN SHARE MODE");
    let inserted: Promise<void>;
    try {
      inserted = jobs.insert(newRow(jobId));
      await jobs.update(jobId, { first_token_ms: 7 });
      jobs.writeSoon(jobId);
      await new Promise((resolve) => setTimeout(resolve, 60));
    } finally {
      await lock.release();
    }
    await inserted;
    await jobs.flush();
    expect((await tableRow(jobId)).first_token_ms).toBe(7);
  });

  it("writes a job's facts and moves in the order they were made", async () => {
    const job = await jobIn("pending");
    const lifecycle = gateway();

    void lifecycle.acknowledged(job.jobId, WORKER);
    const conclusion = await lifecycle.conclude(job, { kind: "failed", reason: "client gone" });

    expect(conclusion.kind).toBe("closed");
    const after = await row(job.jobId);
    expect(after.status).toBe("failed");
    expect(after.processing_at).not.toBeNull();
  });
  /** Every write of a job's row, in order, as the status it left (a trigger on the table counts them). */
  async function rowWrites(jobId: string): Promise<GatewayJobStatus[]> {
    const { rows } = await pools[0]!.query<{ status: GatewayJobStatus }>(
      "SELECT status FROM row_write WHERE job_id = $1 ORDER BY n",
      [jobId],
    );
    return rows.map((r) => r.status);
  }

  /** A new job as openEscrow makes it: inserted by the gateway's own store, its escrow open on the chain. */
  async function newJob(
    jobs: JobStore,
  ): Promise<{ jobId: string; jobKey: Hex; deadline: bigint; lockConfirmed: boolean }> {
    const jobId = `job_${process.pid}_${++sequence}`;
    const jobKey = keccak256(toHex(jobId));
    await jobs.insert({
      jobId,
      jobKey,
      wallet: "0x00000000000000000000000000000000000000bb",
      keyHash: keccak256(toHex("key")),
      model: "test-model",
      tier: "standard",
      stream: false,
      maxTokens: 64,
      creditsLocked: 1_000,
      promptTokens: 5,
    });
    chain.open(jobKey);
    return { jobId, jobKey, deadline: chain.now + 120n, lockConfirmed: true };
  }

  beforeAll(async () => {
    await pools[0]!.query(`
      CREATE TABLE row_write (n bigserial PRIMARY KEY, job_id text NOT NULL, status text NOT NULL);
      CREATE FUNCTION count_row_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO row_write (job_id, status) VALUES (NEW.job_id, NEW.status); RETURN NEW; END $$;
      CREATE TRIGGER count_row_write AFTER INSERT OR UPDATE ON gateway_job
        FOR EACH ROW EXECUTE FUNCTION count_row_write();`);
  });

  afterAll(async () => {
    await pools[0]?.query("DROP TRIGGER count_row_write ON gateway_job; DROP FUNCTION count_row_write()");
  });

  it("writes a settled job's row three times: inserted, closed to settling with everything before, settled and final", async () => {
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);
    const escrowTx = keccak256(toHex(`open-${job.jobId}`));
    chain.head = 8n; // the chain moved past the settlement's block (7) before it was recorded: final at once

    await jobs.update(job.jobId, { escrow_tx: escrowTx });
    await jobs.update(job.jobId, { deadline: job.deadline });
    const acknowledged = lifecycle.acknowledged(job.jobId, WORKER);
    await jobs.update(job.jobId, { first_token_ms: 42 });
    const conclusion = await lifecycle.conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });
    if (conclusion.kind !== "settling") throw new Error(`not settling: ${conclusion.kind}`);
    await conclusion.settlement.mined;

    const settled = await untilTable(job.jobId, (r) => r.status === "settled");
    expect(await acknowledged).toEqual({ moved: true });
    expect(await rowWrites(job.jobId)).toEqual(["pending", "settling", "settled"]);
    expect(settled).toMatchObject({
      escrow_tx: escrowTx,
      deadline: String(job.deadline),
      first_token_ms: 42,
      worker: WORKER,
      credits_charged: "3",
      final: true,
    });
    expect(settled.processing_at).not.toBeNull();
    expect(settled.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("folds a job's side facts into its next status move instead of writing them on their own", async () => {
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);

    await jobs.update(job.jobId, { escrow_tx: keccak256(toHex(`open-${job.jobId}`)), first_token_ms: 7 });
    expect((await tableRow(job.jobId)).first_token_ms).toBeNull();
    await lifecycle.move(job.jobId, "failed", { error: "client gone" }, ["pending", "processing"]);

    expect(await rowWrites(job.jobId)).toEqual(["pending", "failed"]);
    expect(await tableRow(job.jobId)).toMatchObject({ status: "failed", first_token_ms: 7, error: "client gone" });
  });

  it("writes a lone side fact on its own once the job had no move for the hold bound", async () => {
    const holdMs = 300;
    gateway({}, { holdMs });
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);
    const heldAt = Date.now();

    await jobs.update(job.jobId, { first_token_ms: 9 });

    expect((await tableRow(job.jobId)).first_token_ms).toBeNull();
    await untilTable(job.jobId, (r) => r.first_token_ms === 9);
    expect(Date.now() - heldAt).toBeGreaterThanOrEqual(holdMs - 20);
    expect(await rowWrites(job.jobId)).toEqual(["pending", "pending"]);
  });

  it("writes a held acknowledgement on its own once the job had no other move for the hold bound", async () => {
    const lifecycle = gateway({}, { holdMs: 300 });
    const job = await newJob(stores.at(-1)!);

    const acknowledged = lifecycle.acknowledged(job.jobId, WORKER);

    expect((await tableRow(job.jobId)).status).toBe("pending");
    expect(await acknowledged).toEqual({ moved: true });
    expect(await tableRow(job.jobId)).toMatchObject({ status: "processing", worker: WORKER });
    expect(await rowWrites(job.jobId)).toEqual(["pending", "processing"]);
  });

  it("collapses a held move and the job's next move into one compare-and-set that resolves both callers", async () => {
    const lifecycle = gateway();
    const job = await newJob(stores.at(-1)!);

    const [acknowledged, conclusion] = await Promise.all([
      lifecycle.acknowledged(job.jobId, WORKER),
      lifecycle.conclude(job, {
        kind: "receipt",
        receipt: receiptFor(job.jobKey),
        signature: SIGNATURE,
        worker: WORKER,
      }),
    ]);

    expect(acknowledged).toEqual({ moved: true });
    expect(conclusion.kind).toBe("settling");
    expect((await rowWrites(job.jobId)).slice(0, 2)).toEqual(["pending", "settling"]);
  });

  it("gives both collapsed callers the refusal when another gateway closed the job first", async () => {
    const lifecycle = gateway();
    const job = await newJob(stores.at(-1)!);
    const acknowledged = lifecycle.acknowledged(job.jobId, WORKER);
    await gateway().lockRefused(job.jobId, "closed elsewhere");

    const conclusion = await lifecycle.conclude(job, { kind: "failed", reason: "worker gone" });

    expect(await acknowledged).toEqual({ moved: false, current: "failed" });
    expect(conclusion).toEqual({ kind: "already_moved", current: "failed" });
    expect(chain.count("failJob", job.jobKey)).toBe(0);
    expect((await tableRow(job.jobId)).processing_at).toBeNull();
  });

  it("still writes the side facts folded into a move that did not match", async () => {
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);
    await jobs.update(job.jobId, { first_token_ms: 11 });
    await gateway().lockRefused(job.jobId, "closed elsewhere");

    expect(await lifecycle.move(job.jobId, "settling", {}, ["pending", "processing"])).toEqual({
      moved: false,
      current: "failed",
    });

    expect((await untilTable(job.jobId, (r) => r.first_token_ms !== null)).first_token_ms).toBe(11);
  });

  it("shows the facts and moves it holds through its reads before they are written", async () => {
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);
    const escrowTx = keccak256(toHex(`open-${job.jobId}`));

    void lifecycle.acknowledged(job.jobId, WORKER);
    await jobs.update(job.jobId, { escrow_tx: escrowTx, first_token_ms: 5, deadline: job.deadline });

    expect(await tableRow(job.jobId)).toMatchObject({ status: "pending", escrow_tx: null, first_token_ms: null });
    const held = { status: "processing", worker: WORKER, escrow_tx: escrowTx, first_token_ms: 5 };
    expect(await jobs.get(job.jobId)).toMatchObject({ ...held, deadline: String(job.deadline) });
    expect((await jobs.get(job.jobId))?.processing_at).toBeInstanceOf(Date);
    const listed = await jobs.listForKey(keccak256(toHex("key")), { limit: 1_000 });
    expect(listed.find((r) => r.job_id === job.jobId)).toMatchObject(held);
    expect((await jobs.listOpen()).find((r) => r.job_id === job.jobId)).toMatchObject(held);
    await jobs.flush();
    expect(await tableRow(job.jobId)).toMatchObject(held);
  });

  it("lets exactly one of two gateways make the same collapsed move", async () => {
    const racing = await Promise.all(Array.from({ length: 10 }, () => newJob(store)));
    const [first, second] = [gateway(), gateway()];

    const results = await Promise.all(
      racing.flatMap((job) =>
        [first, second].map(async (g) => {
          const acknowledged = g.acknowledged(job.jobId, WORKER);
          const conclusion = await g.conclude(job, {
            kind: "receipt",
            receipt: receiptFor(job.jobKey),
            signature: SIGNATURE,
            worker: WORKER,
          });
          return { acknowledged: await acknowledged, conclusion };
        }),
      ),
    );

    expect(results.filter((r) => r.conclusion.kind === "settling")).toHaveLength(10);
    for (const r of results) expect(r.acknowledged.moved).toBe(r.conclusion.kind === "settling");
    for (const job of racing) expect(chain.count("settle", job.jobKey)).toBe(1);
  });

  it("yields job.processing once for a job whose acknowledgement was written with its close", async () => {
    const webhookId = `wh_${process.pid}`;
    await pools[0]!.query(
      `INSERT INTO webhook (id, wallet, url, events, secret, created_at)
       VALUES ($1, $2, 'https://example.test/hook', ARRAY['job.processing'], 'secret', now() - interval '1 hour')`,
      [webhookId, "0x00000000000000000000000000000000000000bb"],
    );
    try {
      const lifecycle = gateway();
      const job = await newJob(stores.at(-1)!);
      void lifecycle.acknowledged(job.jobId, WORKER);
      await lifecycle.conclude(job, {
        kind: "receipt",
        receipt: receiptFor(job.jobKey),
        signature: SIGNATURE,
        worker: WORKER,
      });
      expect((await rowWrites(job.jobId)).slice(0, 2)).toEqual(["pending", "settling"]);

      await ingestProcessingJobs(pools[0]!);
      await ingestProcessingJobs(pools[0]!);

      const { rows } = await pools[0]!.query("SELECT id FROM webhook_event WHERE source = $1 AND event = $2", [
        job.jobId,
        "job.processing",
      ]);
      expect(rows).toHaveLength(1);
    } finally {
      await pools[0]!.query("UPDATE webhook SET deleted_at = now() WHERE id = $1", [webhookId]);
    }
  });

  it("tells the dispatcher more job.processing may be waiting after a round that read a whole batch", async () => {
    const webhookId = `wh_batch_${process.pid}`;
    await pools[0]!.query(
      `INSERT INTO webhook (id, wallet, url, events, secret, created_at)
       VALUES ($1, $2, 'https://example.test/hook', ARRAY['job.processing'], 'secret', now() - interval '1 hour')`,
      [webhookId, "0x00000000000000000000000000000000000000bb"],
    );
    try {
      while ((await ingestProcessingJobs(pools[0]!)).more);
      const lifecycle = gateway();
      const jobs = stores.at(-1)!;
      for (let i = 0; i < 3; i++) {
        const job = await newJob(jobs);
        void lifecycle.acknowledged(job.jobId, WORKER);
      }
      await jobs.flush();

      expect(await ingestProcessingJobs(pools[0]!, 2)).toEqual({ deliveries: 2, more: true });
      expect(await ingestProcessingJobs(pools[0]!, 2)).toEqual({ deliveries: 1, more: false });
    } finally {
      await pools[0]!.query("UPDATE webhook SET deleted_at = now() WHERE id = $1", [webhookId]);
    }
  });

  it("a round with no job.processing to record takes no lock on its cursor and writes nothing", async () => {
    // The cursor exists and is current (a first round creates it or moves it up).
    await ingestProcessingJobs(pools[0]!);
    const cursorRow = async () =>
      (
        await pools[0]!.query<{ xmax: string; position: string }>(
          "SELECT xmax::text AS xmax, position FROM webhook_cursor WHERE name = $1",
          [PROCESSING_CURSOR_NAME],
        )
      ).rows[0];
    const before = await cursorRow();
    const lifecycle = gateway();
    const jobs = stores.at(-1)!;
    const job = await newJob(jobs);
    void lifecycle.acknowledged(job.jobId, WORKER);
    await jobs.flush();

    expect(await ingestProcessingJobs(pools[0]!)).toEqual({ deliveries: 0, more: false });
    // A locking round would have left its own transaction id in the row's xmax.
    expect(await cursorRow()).toEqual(before);
  });
});

describe("finality (issue 25)", () => {
  async function settledAt(block: bigint): Promise<{ jobId: string; jobKey: Hex; deadline: bigint }> {
    const job = await jobIn("processing");
    await gateway().conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });
    await eventually(job.jobId, "settled");
    await pools[0]!.query("UPDATE gateway_job SET settlement_block = $2 WHERE job_id = $1", [job.jobId, block]);
    return job;
  }

  it("leaves a settlement recorded while still at the chain's head to the finality sweep", async () => {
    const job = await jobIn("processing");

    await gateway().conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await eventually(job.jobId, "settled")).toMatchObject({ settlement_block: "7", final: false });
  });

  it("records a settlement the chain already buried the finality depth deep as final with its move to settled", async () => {
    const job = await jobIn("processing");
    chain.head = 9n;

    await gateway({ finalityDepth: 2 }).conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await settledInTable(job.jobId)).toMatchObject({ settlement_block: "7", final: true });
  });

  it("waits a little for the chain to bury a mined settlement and records it final with its move to settled", async () => {
    const job = await jobIn("processing");
    setTimeout(() => (chain.head = 8n), 100);

    await gateway({ finalWaitMs: 2_000 }).conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await settledInTable(job.jobId)).toMatchObject({ settlement_block: "7", final: true });
  });

  it("does not poll for a burial the chain's pace cannot bring within the wait", async () => {
    // The chain was seen to move a block every 300 ms; a settlement needing two more blocks within 400 ms cannot
    // be final in time. The block comes 300 ms after the lifecycle's first read of the head, so the pace it sees
    // does not depend on how long the job took to get there.
    const lifecycle = gateway({ finalityDepth: 3, finalWaitMs: 400 });
    const first = await jobIn("processing");
    const readHead = chain.headBlock.bind(chain);
    let nextBlock: NodeJS.Timeout | undefined;
    chain.headBlock = () => {
      nextBlock ??= setTimeout(() => (chain.head = 8n), 300);
      return readHead();
    };
    await lifecycle.conclude(first, {
      kind: "receipt",
      receipt: receiptFor(first.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });
    expect(await settledInTable(first.jobId)).toMatchObject({ final: false });
    const second = await jobIn("processing");
    const readsBefore = chain.headReads;

    await lifecycle.conclude(second, {
      kind: "receipt",
      receipt: receiptFor(second.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await settledInTable(second.jobId)).toMatchObject({ settlement_block: "7", final: false });
    // One read of the head (none when the last one is fresh) instead of one every 50 ms for 400 ms.
    expect(chain.headReads - readsBefore).toBeLessThanOrEqual(1);
  });

  it("reads a buried settlement's finality off its block, without a jobOf", async () => {
    chain.withBlocks();
    const job = await jobIn("processing");
    chain.head = 8n;

    await gateway().conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await settledInTable(job.jobId)).toMatchObject({ settlement_block: "7", final: true });
    expect(chain.jobOfReads).toBe(0);
  });

  it("does not take a settlement whose block a reorg replaced as final", async () => {
    chain.withBlocks();
    chain.canonicalBlocks!.set(7n, `0x${"c7".repeat(32)}`);
    const job = await jobIn("processing");
    chain.head = 8n;

    await gateway().conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });

    expect(await eventually(job.jobId, "settled")).toMatchObject({ settlement_block: "7", final: false });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await row(job.jobId)).final).toBe(false);
  });

  it("marks a settlement the chain buries after its move to settled final by its block (a chain with block times)", async () => {
    chain.withBlocks();
    const job = await jobIn("processing");

    await gateway().conclude(job, {
      kind: "receipt",
      receipt: receiptFor(job.jobKey),
      signature: SIGNATURE,
      worker: WORKER,
    });
    expect(await eventually(job.jobId, "settled")).toMatchObject({ settlement_block: "7", final: false });
    chain.head = 8n;

    for (let i = 0; i < 100 && !(await row(job.jobId)).final; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect((await row(job.jobId)).final).toBe(true);
    expect(chain.jobOfReads).toBe(0);
  });

  it("marks a settled row final only once its settlement is the finality depth deep", async () => {
    const job = await settledAt(99n);
    const lifecycle = gateway({ finalityDepth: 2 });

    expect(await lifecycle.confirmFinality(await row(job.jobId), 100n)).toBe("not_yet");
    expect((await row(job.jobId)).final).toBe(false);
    expect(await lifecycle.confirmFinality(await row(job.jobId), 101n)).toBe("final");
    expect((await row(job.jobId)).final).toBe(true);
  });

  it("settles the stored receipt again when a reorg removed the settlement", async () => {
    const job = await settledAt(95n);
    chain.jobs.get(job.jobKey)!.status = "open"; // the block carrying the settlement is gone

    const decided = await gateway({ finalityDepth: 2 }).confirmFinality(await row(job.jobId), 100n);

    expect(decided).toBe("resettling");
    expect(chain.count("settle", job.jobKey)).toBe(2);
    expect(chain.statusOf(job.jobKey)).toBe("settled");
    const after = await eventually(job.jobId, "settled");
    expect(after.settlement_block).toBe("7");
  });

  it("takes a row back to settling, its receipt kept, when a reorg removed the lock as well", async () => {
    const job = await settledAt(95n);
    chain.jobs.delete(job.jobKey);

    const decided = await gateway({ finalityDepth: 2 }).confirmFinality(await row(job.jobId), 100n);

    expect(decided).toBe("resettling");
    const after = await row(job.jobId);
    expect(after.status).toBe("settling");
    expect(after.receipt).not.toBeNull();
    expect(after.settlement_tx).toBeNull();
    expect(chain.count("settle", job.jobKey)).toBe(1);
  });
});

/** Counts the transactions a pool commits: each query outside BEGIN…COMMIT, and each COMMIT. */
function countCommits(pool: pg.Pool): { count: number } {
  const counter = { count: 0 };
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
    counter.count++;
    return query(...args);
  };
  // pg's own Pool.query checks out a client with a callback: only the promise form (transactions) is counted.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient> | undefined;
  (pool as unknown as { connect: unknown }).connect = (...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    return connect()!.then((client) => {
      const clientQuery = client.query.bind(client) as (...queryArgs: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (...queryArgs: unknown[]) => {
        if (queryArgs[0] === "COMMIT") counter.count++;
        return clientQuery(...queryArgs);
      };
      return client;
    });
  };
  return counter;
}

describe("concludeJob: what the client is charged", () => {
  // 10 credits up to 500 tokens, then 20 per 1,000 (rounded up); 1,000 locked, 4,000 left after the lock.
  const model = { id: "test-model", tier: "standard", creditsPerRequest: 10, creditsPer1kTokens: 20 };
  const prepared = { model } as unknown as PreparedCompletion;

  function openedFor(job: { jobId: string; jobKey: Hex; deadline: bigint }): OpenedJob {
    return {
      ...job,
      escrowTx: keccak256(toHex(`open-${job.jobId}`)),
      creditsLocked: 1_000,
      balanceAfterLock: 4_000,
      startedAt: Date.now(),
      lockMined: Promise.resolve(),
      recorded: Promise.resolve(),
      lockRefused: new AbortController().signal,
      endedWithoutCharge: false,
      lockConfirmed: true,
    };
  }

  function delivered(jobKey: Hex, completionTokens: number): RelayOutcome {
    const receipt = receiptFor(jobKey, completionTokens);
    return {
      kind: "delivered",
      text: "hello",
      finishReason: "stop",
      promptTokens: receipt.promptTokens,
      completionTokens,
      worker: WORKER,
      backend: "test",
      close: { kind: "receipt", receipt, signature: SIGNATURE, worker: WORKER },
    };
  }

  it("charges a delivered receipt at the model's price and returns the credits remaining after settlement", async () => {
    const lifecycle = gateway();
    const job = await jobIn("processing");

    const concluded = await concludeJob({ lifecycle }, prepared, openedFor(job), delivered(job.jobKey, 1_500));

    expect(concluded.kind).toBe("charged");
    if (concluded.kind !== "charged") return;
    expect(concluded.charge).toEqual({
      creditsCharged: 30,
      creditsRemaining: 4_000 + 1_000 - 30,
      promptTokens: 5,
      completionTokens: 1_500,
      worker: WORKER,
    });
    await concluded.settlement.mined;
    expect((await eventually(job.jobId, "settled")).status).toBe("settled");
  });

  it("never charges more than the lock", async () => {
    const lifecycle = gateway();
    const job = await jobIn("processing");

    const concluded = await concludeJob({ lifecycle }, prepared, openedFor(job), delivered(job.jobKey, 100_000));

    expect(concluded.kind === "charged" && concluded.charge).toMatchObject({
      creditsCharged: 1_000,
      creditsRemaining: 4_000,
    });
  });

  it("charges nothing and answers job_failed when another process closed the job first", async () => {
    const lifecycle = gateway();
    const job = await jobIn("failed");

    const concluded = await concludeJob({ lifecycle }, prepared, openedFor(job), delivered(job.jobKey, 10));

    expect(concluded.kind).toBe("not_charged");
    expect(concluded.kind === "not_charged" && concluded.error.code).toBe("job_failed");
    expect(chain.count("settle", job.jobKey)).toBe(0);
  });

  it("answers the lock's refusal, nothing charged, when the refusal closed the job while its receipt was checked", async () => {
    // openEscrow records the refusal, moves the job to failed, then aborts lockRefused: a relay that looked at the
    // signal just before the abort reaches this move with the job already failed (a CI run answered job_failed).
    const lifecycle = gateway();
    const job = await jobIn("processing");
    await lifecycle.lockRefused(job.jobId, "lock refused: spending_cap_exceeded");
    const refusal = new ApiError("spending_cap_exceeded");

    const concluded = await concludeJob(
      { lifecycle },
      prepared,
      { ...openedFor(job), refusal, lockConfirmed: false },
      delivered(job.jobKey, 10),
    );

    expect(concluded.kind).toBe("not_charged");
    expect(concluded.kind === "not_charged" && concluded.error.code).toBe("spending_cap_exceeded");
    expect(concluded.kind === "not_charged" && concluded.error.headers["x-service-job-id"]).toBe(job.jobId);
    expect(chain.count("settle", job.jobKey)).toBe(0);
  });

  it("answers a timed-out job with the refund transaction, nothing charged", async () => {
    const lifecycle = gateway({ gatewayTimeoutMs: 5_000 });
    const job = await jobIn("processing");

    const concluded = await concludeJob({ lifecycle }, prepared, openedFor(job), {
      kind: "timed_out",
      worker: undefined,
      close: { kind: "timed_out" },
    });

    expect(concluded.kind).toBe("not_charged");
    if (concluded.kind !== "not_charged") return;
    expect(concluded.error).toBeInstanceOf(ApiError);
    expect(concluded.error.code).toBe("job_timeout");
    expect(concluded.error.details?.["refund_tx"]).toMatch(/^0x/);
    expect(chain.statusOf(job.jobKey)).toBe("failed");
  });
});
