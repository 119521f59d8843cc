/**
 * What happens when the worker dies mid-job (api/README.md "Where to read"). The relay runs the job on one worker
 * at a time and decides from what it saw; the money follows from its outcome in `concludeJob` (concludeJob.ts).
 *
 * - **Before the first token** (the worker refuses the connection, answers an error, sends no acknowledgement within
 *   10 s, or closes the stream without a result): the next healthy candidate is tried (failover, `pickWorker` over
 *   the ones not tried yet). The client sees nothing of it. With no candidate left the job ends `worker_failed`
 *   with `no_workers_available` (503, `retry-after`), and the whole lock goes back (failJob).
 * - **After the first token** (the stream breaks, an `error` event, no `done`): no failover — the client already has
 *   part of one worker's answer. The job ends `worker_failed` with `job_failed` ("credits_refunded": the whole lock);
 *   the lifecycle sends failJob and waits for it to be mined before the client hears of it (a lock not mined yet is
 *   failed as soon as it lands: openEscrow.ts). The
 *   worker is paid nothing: only a verified receipt is ever settled. A stream that already started gets an error
 *   event and its end instead of an HTTP error.
 * - **A `done` whose receipt does not match** what was relayed (other text, token counts, worker, job, escrow):
 *   `worker_failed`, `job_failed`, nothing charged, the lock returned.
 * - **No result within `JOB_TIMEOUT_MS`**: the worker is told to cancel; the job ends `timed_out` and the lifecycle
 *   refunds it (`job_timeout` with the refund transaction).
 * - Each failure counts against the worker in the pool (`jobEnded(…, "failed")`): three since its last success
 *   and it gets no jobs until its next health probe succeeds (workerPool.ts); a worker whose probe fails gets none.
 *
 * The gateway itself dying mid-job is recovery's: jobs/gatewayLeases.ts (a peer takes over) and jobs/sweepJobs.ts.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { isAddressEqual, type Hex } from "viem";
import type { Logger } from "pino";
import { lazyJobLogger } from "../observability/jobLogger.js";
import type { EscrowChain } from "../chain/escrowChain.js";
import { verifyReceipt } from "../chain/verifyReceipt.js";
import type { GatewayConfig } from "../config.js";
import { ApiError } from "../errors/ApiError.js";
import type { JobLifecycle, JobOutcome } from "../jobs/jobLifecycle.js";
import type { JobStore } from "../jobs/jobStore.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { LatencyStats } from "../workerPool/latencyStats.js";
import type { WorkerClient } from "../workerPool/workerClient.js";
import type { WorkerPool } from "../workerPool/workerPool.js";
import { pickWorker, type WorkerCandidate } from "../workerPool/pickWorker.js";
import type { CancelResponse, WorkerEvent, WorkerJobPayload } from "../workerPool/workerProtocol.js";
import type { FinishReason } from "./completionObjects.js";
import { startRelayTrace } from "../observability/phaseTrace.js";
import type { OpenedJob } from "./openEscrow.js";
import { noWorkersError, type PreparedCompletion } from "./prepareCompletion.js";

/**
 * What running a job on a worker uses: the pool (who may serve, in-flight counts), the worker client, the
 * escrow's identity for the receipt check, the lifecycle for the acknowledgement, and the side facts it records
 * (time to first token, latency). It never settles, fails or refunds: that is `concludeJob` (concludeJob.ts).
 */
export interface RelayDeps {
  workers: Pick<WorkerPool, "candidatesFresh" | "backendOf" | "jobStarted" | "jobEnded">;
  workerClient: Pick<WorkerClient, "runJob" | "cancel">;
  chain: Pick<EscrowChain, "chainId" | "escrowAddress">;
  lifecycle: Pick<JobLifecycle, "acknowledged">;
  jobs: Pick<JobStore, "update">;
  latency: Pick<LatencyStats, "record">;
  metrics: Pick<GatewayMetrics, "timeToFirstToken">;
  /** Called once a worker's acknowledgement of a job is written (wakes the webhook dispatcher: job.processing). */
  onJobProcessing?: () => void;
  config: Pick<GatewayConfig, "JOB_TIMEOUT_MS">;
  logger: Logger;
}

/** Where relayed tokens go: the SSE writer for streams, a buffer for whole completions. */
export interface RelaySink {
  /** Called once, before the first token (or before the end of an empty completion), with the serving worker. */
  onServing(worker: Hex, backend: string): void;
  onToken(text: string): void;
  /** Aborts when the client goes away. */
  clientGone: AbortSignal;
  /** Whether relayed tokens reach the client as they come (streaming); a whole completion delivers nothing early. */
  deliversIncrementally: boolean;
}

/**
 * How the relay ended. `close` is what the job lifecycle does with it (jobLifecycle.ts `conclude`): the relay
 * itself never touches the chain.
 */
export type RelayOutcome =
  /** The whole answer was relayed and its receipt verified. */
  | {
      kind: "delivered";
      text: string;
      finishReason: FinishReason;
      promptTokens: number;
      completionTokens: number;
      worker: Hex;
      backend: string;
      close: Extract<JobOutcome, { kind: "receipt" }>;
    }
  /** The client left: the delivered part's verified receipt, or nothing to charge. */
  | { kind: "client_gone"; worker: Hex | undefined; close: JobOutcome }
  /** No worker, a worker failure, a rejected receipt: `error` is the client's answer. */
  | { kind: "worker_failed"; worker: Hex | undefined; error: ApiError; close: Extract<JobOutcome, { kind: "failed" }> }
  /** No worker completed within the job timeout (the answer needs the refund transaction: `timeoutError`). */
  | { kind: "timed_out"; worker: Hex | undefined; close: Extract<JobOutcome, { kind: "timed_out" }> };

class WorkerJobError extends Error {
  override name = "WorkerJobError";
}

/** Worker's acknowledgement must come quickly; a silent worker is replaced while time remains. */
const ACK_TIMEOUT_MS = 10_000;
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * Routes an escrowed job to a worker and relays its tokens (ARCHITECTURE "Route"): failover before the first
 * token, the receipt check, and the three ways a job can end early — the job timeout, a worker failure and the
 * client leaving (a receipt for what was delivered). Returns the outcome; settling, failing and refunding are the
 * job lifecycle's (jobLifecycle.ts).
 */
export async function relayCompletion(
  deps: RelayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  sink: RelaySink,
): Promise<RelayOutcome> {
  // The job's deadline, a timer of its own rather than `AbortSignal.timeout` (see `relay`'s attempt signal).
  const deadline = new AbortController();
  const deadlineTimer = setTimeout(
    () => deadline.abort(new WorkerJobError("the job's deadline passed")),
    Math.max(0, opened.startedAt + deps.config.JOB_TIMEOUT_MS - Date.now()),
  );
  let outcome: RelayOutcome;
  try {
    outcome = await relay(deps, prepared, opened, sink, deadline.signal);
  } finally {
    clearTimeout(deadlineTimer);
  }
  // Nothing to charge: a lock still unmined now is failed as soon as it lands (openEscrow.ts, returnLateLock).
  if (outcome.close.kind !== "receipt") opened.endedWithoutCharge = true;
  return outcome;
}

async function relay(
  deps: RelayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  sink: RelaySink,
  deadlineSignal: AbortSignal,
): Promise<RelayOutcome> {
  const { logger } = deps;
  const log = lazyJobLogger(logger, opened.jobId);
  const payload = workerPayload(deps, prepared, opened, sink);
  const tried = new Set<string>();
  let text = "";
  let tokens = 0;
  let serving: WorkerCandidate | undefined;
  let servingNotified = false;
  const trace = startRelayTrace(opened.startedAt);

  for (;;) {
    if (opened.lockRefused.aborted) return lockRefused(opened, prepared, serving?.address);
    if (sink.clientGone.aborted) return clientGone(deps, prepared, opened, undefined, undefined);
    if (deadlineSignal.aborted) return timedOut(serving);
    const candidate = pickWorker(await deps.workers.candidatesFresh(prepared.model.id), tried);
    if (!candidate) {
      return {
        kind: "worker_failed",
        error: withJobHeaders(noWorkersError(prepared.model.id), opened, prepared, undefined),
        worker: undefined,
        close: {
          kind: "failed",
          reason: tried.size === 0 ? "no worker available" : "every worker failed before the first token",
        },
      };
    }
    tried.add(candidate.address.toLowerCase());

    const attempt = new AbortController();
    const ackTimer = setTimeout(() => attempt.abort(new WorkerJobError("no acknowledgement in time")), ACK_TIMEOUT_MS);
    // The client leaving: ask the worker for a receipt of what was delivered, then drop the connection.
    let cancel: Promise<CancelResponse | undefined> | undefined;
    let delivered = { text: "", tokens: 0 };
    const onGone = () => {
      delivered = sink.deliversIncrementally ? { text, tokens } : { text: "", tokens: 0 };
      cancel = deps.workerClient
        .cancel(candidate.endpoint, opened.jobId, delivered.tokens, CANCEL_TIMEOUT_MS)
        .catch((error: unknown) => {
          log().warn({ err: error }, "worker cancel failed");
          return undefined;
        })
        .finally(() => attempt.abort(new WorkerJobError("client gone")));
    };
    sink.clientGone.addEventListener("abort", onGone, { once: true });
    // Gone while the candidates were read: the abort event has fired already and will not fire again.
    if (sink.clientGone.aborted) {
      clearTimeout(ackTimer);
      sink.clientGone.removeEventListener("abort", onGone);
      return clientGone(deps, prepared, opened, undefined, undefined);
    }
    // A lock the chain refused stops the job at once (ledger: docs/DESIGN.md "A refused lock"), as does its deadline.
    // Forwarded by two listeners removed when the attempt ends, rather than `AbortSignal.any`: its weak references
    // and sequence conversion were up to 0.15 ms of the gateway's CPU per job in the bench's profiles (issue 26).
    const stopAttempt = (event: Event) => attempt.abort((event.target as AbortSignal).reason);
    deadlineSignal.addEventListener("abort", stopAttempt, { once: true });
    opened.lockRefused.addEventListener("abort", stopAttempt, { once: true });
    // Either may have fired while the candidates were read.
    for (const stop of [deadlineSignal, opened.lockRefused]) if (stop.aborted) attempt.abort(stop.reason);
    const signal = attempt.signal;
    const attemptStartedAt = Date.now();
    trace.mark("picked");
    let backend = deps.workers.backendOf(candidate.address) ?? "unknown";
    let ok = false;
    deps.workers.jobStarted(candidate.address);
    try {
      for await (const event of deps.workerClient.runJob(candidate.endpoint, payload, signal)) {
        if (cancel) continue;
        const step = handleEvent(event);
        if (step === "ack") {
          trace.mark("ack");
          clearTimeout(ackTimer);
          if (event.type === "ack") {
            if (!isAddressEqual(event.worker as Hex, candidate.address))
              throw new WorkerJobError(`acknowledged as ${event.worker}`);
            backend = event.backend;
          }
          // Held for the job's next write (jobStore.ts); the stream does not wait for it. The webhook dispatcher
          // is woken once the row says processing: job.processing is read from it.
          void deps.lifecycle.acknowledged(opened.jobId, candidate.address).then(
            (result) => (result.moved ? deps.onJobProcessing?.() : undefined),
            (error: unknown) => log().warn({ err: error }, "could not record the acknowledgement"),
          );
        } else if (event.type === "token" || event.type === "tokens") {
          if (tokens === 0) {
            clearTimeout(ackTimer);
            trace.mark("token");
            // Routed before its row committed (openEscrow.ts): the client sees nothing of a job with no row.
            await opened.recorded;
            if (opened.lockRefused.aborted) return lockRefused(opened, prepared, candidate.address);
            // The client left during the wait: its cancel counted what it had (nothing), as for any later event.
            if (cancel) continue;
            trace.mark("recorded");
            trace.write();
            deps.latency.record(candidate.address, prepared.model.id, Date.now() - attemptStartedAt);
            const firstTokenMs = Date.now() - opened.startedAt;
            deps.metrics.timeToFirstToken.observe({ model: prepared.model.id }, firstTokenMs / 1000);
            // Kept for the models' trust figures; never holds up the stream.
            void deps.jobs
              .update(opened.jobId, { first_token_ms: firstTokenMs })
              .catch((error: unknown) => log().warn({ err: error }, "could not record the time to first token"));
            serving = candidate;
            servingNotified = true;
            sink.onServing(candidate.address, backend);
          }
          if (event.type === "token") {
            text += event.text;
            tokens++;
            sink.onToken(event.text);
          } else {
            for (const piece of event.texts) {
              text += piece;
              sink.onToken(piece);
            }
            tokens += event.texts.length;
          }
        } else if (event.type === "error") {
          throw new WorkerJobError(`worker error ${event.code}: ${event.message}`);
        } else if (event.type === "done") {
          await opened.recorded;
          if (opened.lockRefused.aborted) return lockRefused(opened, prepared, candidate.address);
          if (cancel) continue;
          ok = true;
          serving = candidate;
          if (!servingNotified) sink.onServing(candidate.address, backend);
          return await finish(deps, prepared, opened, candidate, backend, { text, tokens }, event, sink);
        }
      }
      throw new WorkerJobError("the worker closed the stream without a result");
    } catch (error) {
      if (opened.lockRefused.aborted) return lockRefused(opened, prepared, candidate.address);
      if (cancel || sink.clientGone.aborted) {
        if (!cancel) onGone();
        return clientGone(deps, prepared, opened, candidate, { response: await cancel, delivered });
      }
      if (deadlineSignal.aborted) {
        void deps.workerClient.cancel(candidate.endpoint, opened.jobId, 0, CANCEL_TIMEOUT_MS).catch(() => undefined);
        return timedOut(candidate);
      }
      if (tokens === 0) {
        log().warn(
          { worker: candidate.address, err: (error as Error).message },
          "worker failed before the first token; failing over",
        );
        continue;
      }
      log().error({ worker: candidate.address, err: (error as Error).message, tokens }, "worker failed mid-stream");
      return {
        kind: "worker_failed",
        close: { kind: "failed", reason: `worker failed after ${tokens} tokens: ${(error as Error).message}` },
        error: withJobHeaders(
          new ApiError("job_failed", { details: { job_id: opened.jobId, credits_refunded: opened.creditsLocked } }),
          opened,
          prepared,
          candidate.address,
          opened.balanceAfterLock + opened.creditsLocked,
        ),
        worker: candidate.address,
      };
    } finally {
      clearTimeout(ackTimer);
      deadlineSignal.removeEventListener("abort", stopAttempt);
      opened.lockRefused.removeEventListener("abort", stopAttempt);
      sink.clientGone.removeEventListener("abort", onGone);
      deps.workers.jobEnded(candidate.address, ok ? "ok" : "failed");
    }
  }
}

function handleEvent(event: WorkerEvent): "ack" | "other" {
  return event.type === "ack" ? "ack" : "other";
}

function workerPayload(
  deps: RelayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  sink: Pick<RelaySink, "deliversIncrementally">,
): WorkerJobPayload {
  const { request } = prepared;
  return {
    job_id: opened.jobId,
    job_id_bytes32: opened.jobKey,
    model: prepared.model.id,
    messages: request.messages,
    max_tokens: prepared.maxTokens,
    // A whole completion's client reads nothing before the end: the worker may gather its tokens (all but the first).
    ...(sink.deliversIncrementally ? {} : { delivery: "whole" as const }),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop !== undefined ? { stop: request.stop } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(request.frequencyPenalty !== undefined ? { frequency_penalty: request.frequencyPenalty } : {}),
    ...(request.presencePenalty !== undefined ? { presence_penalty: request.presencePenalty } : {}),
    escrow: { chain_id: deps.chain.chainId, address: deps.chain.escrowAddress },
  };
}

async function finish(
  deps: RelayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  worker: WorkerCandidate,
  backend: string,
  relayed: { text: string; tokens: number },
  done: Extract<WorkerEvent, { type: "done" }>,
  sink: Pick<RelaySink, "clientGone" | "deliversIncrementally">,
): Promise<RelayOutcome> {
  // Never waits for the lock to be mined (issue 26): the same signer sends the settlement after the lock, so nonce
  // order mines the lock first, and a settlement whose lock the escrow skipped is skipped in its batch. A lock
  // already refused answers the refusal (nothing was locked, nothing is charged).
  if (opened.lockRefused.aborted) return lockRefused(opened, prepared, worker.address);
  const check = await verifyReceipt(done.receipt, done.signature as Hex, {
    jobKey: opened.jobKey,
    text: relayed.text,
    worker: worker.address,
    chainId: deps.chain.chainId,
    escrow: deps.chain.escrowAddress,
    maxCompletionTokens: prepared.maxTokens,
    relayedTokens: relayed.tokens,
    contextWindow: prepared.model.contextWindow,
  });
  // A whole completion delivers nothing before its body: a client gone before the receipt is stored gets nothing
  // and pays nothing (the receipt is not stored, the job is failed). One turn of the event loop first: the worker's
  // last line and the client's FIN may have been read in the same poll, and the FIN's handler must run before the
  // answer is charged (watchClientGone; a loaded machine made this race, test/api/hardeningV2.test.ts item 1).
  if (!sink.deliversIncrementally) await nextTurn();
  if (!sink.deliversIncrementally && sink.clientGone.aborted)
    return clientGone(deps, prepared, opened, undefined, undefined);
  if (!check.ok) {
    deps.logger.error(
      { job_id: opened.jobId, worker: worker.address, reason: check.reason },
      "receipt rejected; not settling",
    );
    return {
      kind: "worker_failed",
      close: { kind: "failed", reason: `receipt rejected: ${check.reason}` },
      error: withJobHeaders(
        new ApiError("job_failed", {
          message: "The worker's proof did not match the relayed output; nothing was charged.",
          details: { job_id: opened.jobId, credits_refunded: opened.creditsLocked },
        }),
        opened,
        prepared,
        worker.address,
        opened.balanceAfterLock + opened.creditsLocked,
      ),
      worker: worker.address,
    };
  }
  return {
    kind: "delivered",
    text: relayed.text,
    finishReason: done.finish_reason,
    promptTokens: done.receipt.promptTokens,
    completionTokens: done.receipt.completionTokens,
    worker: worker.address,
    backend,
    close: { kind: "receipt", receipt: done.receipt, signature: done.signature as Hex, worker: worker.address },
  };
}

async function clientGone(
  deps: RelayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  worker: WorkerCandidate | undefined,
  cancel: { response: CancelResponse | undefined; delivered: { text: string; tokens: number } } | undefined,
): Promise<RelayOutcome> {
  const log = deps.logger.child({ job_id: opened.jobId });
  if (!worker || !cancel || cancel.delivered.tokens === 0) {
    return {
      kind: "client_gone",
      worker: worker?.address,
      close: { kind: "failed", reason: "client disconnected before any token was delivered" },
    };
  }
  if (!cancel.response) {
    return {
      kind: "client_gone",
      worker: worker.address,
      close: {
        kind: "failed",
        reason: "client disconnected and the worker gave no receipt for the delivered part",
      },
    };
  }
  await opened.lockMined.catch(() => undefined);
  // Never locked: nothing to settle (and nothing was charged).
  if (opened.lockRefused.aborted)
    return { kind: "client_gone", worker: worker.address, close: { kind: "failed", reason: "escrow lock refused" } };
  const { receipt, signature } = cancel.response;
  const check = await verifyReceipt(receipt, signature as Hex, {
    jobKey: opened.jobKey,
    text: cancel.delivered.text,
    worker: worker.address,
    chainId: deps.chain.chainId,
    escrow: deps.chain.escrowAddress,
    maxCompletionTokens: prepared.maxTokens,
    relayedTokens: cancel.delivered.tokens,
    contextWindow: prepared.model.contextWindow,
  });
  if (!check.ok) {
    log.error({ reason: check.reason }, "cancel receipt rejected; not settling");
    return {
      kind: "client_gone",
      worker: worker.address,
      close: { kind: "failed", reason: `cancel receipt rejected: ${check.reason}` },
    };
  }
  log.info({ delivered_tokens: cancel.delivered.tokens }, "client disconnected; settling the delivered part");
  return {
    kind: "client_gone",
    worker: worker.address,
    close: { kind: "receipt", receipt, signature: signature as Hex, worker: worker.address },
  };
}

/**
 * The chain refused the job's lock: the client gets the refusal. The job is already failed (openEscrow moved it
 * through the lifecycle) and nothing was locked, so the lifecycle's `fail` finds it moved and sends nothing.
 */
function lockRefused(opened: OpenedJob, prepared: PreparedCompletion, worker: Hex | undefined): RelayOutcome {
  const reason: unknown = opened.lockRefused.reason;
  const error = reason instanceof ApiError ? reason : new ApiError("service_unavailable");
  return {
    kind: "worker_failed",
    error: withJobHeaders(error, opened, prepared, worker),
    worker,
    close: { kind: "failed", reason: "escrow lock refused" },
  };
}

function timedOut(worker: WorkerCandidate | undefined): RelayOutcome {
  return { kind: "timed_out", worker: worker?.address, close: { kind: "timed_out" } };
}

/** The client's answer to a timed-out job, once the lifecycle has returned the escrow (`refundTx`). */
export function timeoutError(opened: OpenedJob, worker: Hex | undefined, refundTx: Hex | undefined): ApiError {
  return new ApiError("job_timeout", {
    details: { job_id: opened.jobId, credits_refunded: opened.creditsLocked, refund_tx: refundTx ?? null },
    headers: jobHeaders(opened, worker, opened.balanceAfterLock + opened.creditsLocked),
  });
}

export function jobHeaders(
  opened: OpenedJob,
  worker: Hex | undefined,
  creditsRemaining: number | undefined,
): Record<string, string> {
  return {
    "x-service-job-id": opened.jobId,
    "x-service-tx-hash": opened.escrowTx,
    ...(worker ? { "x-service-worker": worker } : {}),
    ...(creditsRemaining !== undefined ? { "x-service-credits-remaining": String(creditsRemaining) } : {}),
  };
}

export function withJobHeaders(
  error: ApiError,
  opened: OpenedJob,
  _prepared: PreparedCompletion,
  worker: Hex | undefined,
  creditsRemaining?: number,
): ApiError {
  return new ApiError(error.code, {
    message: error.message,
    param: error.param,
    ...(error.details ? { details: error.details } : {}),
    headers: {
      ...error.headers,
      ...jobHeaders(opened, worker, creditsRemaining ?? opened.balanceAfterLock + opened.creditsLocked),
    },
  });
}
