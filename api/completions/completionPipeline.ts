import type { Hex } from "viem";
import type { JobLifecycle } from "../jobs/jobLifecycle.js";
import { concludeJob, type ConcludeDeps, type ConcludedJob } from "./concludeJob.js";
import { openEscrow, type EscrowDeps, type OpenedJob } from "./openEscrow.js";
import { prepareCompletion, type PrepareDeps, type PreparedCompletion } from "./prepareCompletion.js";
import { relayCompletion, type RelayDeps, type RelayOutcome, type RelaySink } from "./relayCompletion.js";
import type { ChatCompletionRequest } from "./requestSchema.js";

/** Each step's own inputs (built once by api/main.ts), and the jobs this process is running. */
export interface CompletionPipelineDeps {
  prepare: PrepareDeps;
  escrow: EscrowDeps;
  relay: RelayDeps;
  conclude: ConcludeDeps & { lifecycle: Pick<JobLifecycle, "fail"> };
  /** Jobs this process is running right now: the sweeper and a peer's take-over leave them alone. */
  activeJobs: Set<string>;
}

/**
 * The money path of one completion, whatever its protocol (chat completions, Responses): check, reserve and lock,
 * run on a worker, conclude (charge or return the escrow). The endpoint (endpoints/v1/chatCompletions.create.ts)
 * translates HTTP into these calls and their results into headers, bodies and events; it holds no money rule.
 */
export class CompletionPipeline {
  constructor(private readonly deps: CompletionPipelineDeps) {}

  /** Everything checked before any credit moves (prepareCompletion.ts). */
  prepare(auth: { wallet: Hex; keyHash: Hex }, request: ChatCompletionRequest): Promise<PreparedCompletion> {
    return prepareCompletion(this.deps.prepare, auth, request);
  }

  /** Reserves and locks the credits (openEscrow.ts); the job counts as running here until `finished`. */
  async open(prepared: PreparedCompletion): Promise<OpenedJob> {
    const opened = await openEscrow(this.deps.escrow, prepared);
    this.deps.activeJobs.add(opened.jobId);
    return opened;
  }

  /** Routes the job to a worker and relays its tokens to `sink` (relayCompletion.ts); never closes the job. */
  run(prepared: PreparedCompletion, opened: OpenedJob, sink: RelaySink): Promise<RelayOutcome> {
    return relayCompletion(this.deps.relay, prepared, opened, sink);
  }

  /** Settles, fails or refunds from the relay's outcome; the charge and credits remaining come back (concludeJob.ts). */
  async conclude(prepared: PreparedCompletion, opened: OpenedJob, outcome: RelayOutcome): Promise<ConcludedJob> {
    const concluded = await concludeJob(this.deps.conclude, prepared, opened, outcome);
    if (concluded.kind === "charged") {
      this.answering.add(opened.jobId);
      this.holdWhileSettling(opened.jobId, concluded.settlement.mined);
    }
    return concluded;
  }

  /** Something unexpected broke the request: the escrow goes back now rather than at the deadline. */
  async failUnexpected(opened: OpenedJob, error: Error): Promise<void> {
    await this.deps.conclude.lifecycle.fail(
      opened,
      `internal error: ${error.message}`,
      ["pending", "processing", "settling"],
      !opened.lockConfirmed,
    );
  }

  /** The request is over (answered or not): the sweeper may look at the job again. */
  finished(opened: OpenedJob): void {
    this.answering.delete(opened.jobId);
    if (!this.settlingHere.has(opened.jobId)) this.deps.activeJobs.delete(opened.jobId);
  }

  /** Charged jobs whose request is still writing its answer here. */
  private readonly answering = new Set<string>();
  /** Charged jobs whose settlement this process is still following (see holdWhileSettling). */
  private readonly settlingHere = new Set<string>();

  /**
   * A charged job stays this process's own until its settlement is mined (or SETTLING_HOLD_MS passed): the
   * sweeper would otherwise read the chain for every answered job whose settlement is still on its way (one
   * `jobOf` each per sweep, issue 26) only to find what this process is about to record itself. A settlement that
   * fails, or never ends, lets go, and the sweeper follows the chain as before.
   */
  private holdWhileSettling(jobId: string, mined: Promise<unknown>): void {
    this.settlingHere.add(jobId);
    let timer: NodeJS.Timeout | undefined;
    const capped = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SETTLING_HOLD_MS);
      timer.unref();
    });
    void Promise.race([mined.then(() => undefined), capped])
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(timer);
        this.settlingHere.delete(jobId);
        if (!this.answering.has(jobId)) this.deps.activeJobs.delete(jobId);
      });
  }
}

/** The longest a charged job is held from the sweeper while its settlement is on its way. */
const SETTLING_HOLD_MS = 120_000;
