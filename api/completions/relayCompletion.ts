import { isAddressEqual, type Hex } from "viem";
import { chargeFor } from "./pricing.js";
import type { GatewayDeps } from "../deps.js";
import { ApiError } from "../errors/ApiError.js";
import { failJob, refundJob, settleJob } from "../jobs/closeJob.js";
import { verifyReceipt } from "../chain/verifyReceipt.js";
import type { SettlementTicket } from "../chain/settlementBatcher.js";
import { pickWorker, type WorkerCandidate } from "../routing/pickWorker.js";
import type { CancelResponse, WorkerEvent, WorkerJobPayload } from "../routing/workerProtocol.js";
import type { FinishReason } from "./completionObjects.js";
import type { OpenedJob } from "./openEscrow.js";
import { noWorkersError, type PreparedCompletion } from "./prepareCompletion.js";
import { gatewayMetrics } from "../observability/metrics.js";

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

interface Settled {
  ticket: SettlementTicket;
  creditsCharged: number;
  creditsRemaining: number;
}

export type RelayOutcome =
  | ({
      kind: "completed";
      text: string;
      finishReason: FinishReason;
      promptTokens: number;
      completionTokens: number;
      worker: Hex;
      backend: string;
    } & Settled)
  | ({ kind: "client_gone"; worker: Hex | undefined } & Partial<Settled>)
  | { kind: "error"; error: ApiError; worker: Hex | undefined };

class WorkerJobError extends Error {
  override name = "WorkerJobError";
}

/** Worker's acknowledgement must come quickly; a silent worker is replaced while time remains. */
const ACK_TIMEOUT_MS = 10_000;
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * Routes an escrowed job to a worker and relays its tokens (ARCHITECTURE "Route" → "Settle"): failover before
 * the first token, receipt check, settlement, and the three ways a job can end early — the job timeout
 * (refund), a worker failure (failJob) and the client leaving (settle what was delivered).
 */
export async function relayCompletion(
  deps: GatewayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  sink: RelaySink,
): Promise<RelayOutcome> {
  const { config, logger } = deps;
  const log = logger.child({ job_id: opened.jobId });
  const deadlineSignal = AbortSignal.timeout(Math.max(0, opened.startedAt + config.JOB_TIMEOUT_MS - Date.now()));
  const payload = workerPayload(deps, prepared, opened);
  const tried = new Set<string>();
  let text = "";
  let tokens = 0;
  let serving: WorkerCandidate | undefined;
  let servingNotified = false;

  for (;;) {
    if (opened.lockRefused.aborted) return lockRefused(opened, prepared, serving?.address);
    if (sink.clientGone.aborted) return clientGone(deps, prepared, opened, undefined, undefined);
    if (deadlineSignal.aborted) return timedOut(deps, opened, serving);
    const candidate = pickWorker(await deps.workers.candidatesFresh(prepared.model.id), tried);
    if (!candidate) {
      await failJob(
        deps,
        opened,
        tried.size === 0 ? "no worker available" : "every worker failed before the first token",
      );
      return {
        kind: "error",
        error: withJobHeaders(noWorkersError(prepared.model.id), opened, prepared, undefined),
        worker: undefined,
      };
    }
    tried.add(candidate.address.toLowerCase());

    const attempt = new AbortController();
    // A lock the chain refused stops the job at once (ledger: docs/DESIGN.md "A refused lock").
    const signal = AbortSignal.any([attempt.signal, deadlineSignal, opened.lockRefused]);
    const ackTimer = setTimeout(() => attempt.abort(new WorkerJobError("no acknowledgement in time")), ACK_TIMEOUT_MS);
    // The client leaving: ask the worker for a receipt of what was delivered, then drop the connection.
    let cancel: Promise<CancelResponse | undefined> | undefined;
    let delivered = { text: "", tokens: 0 };
    const onGone = () => {
      delivered = sink.deliversIncrementally ? { text, tokens } : { text: "", tokens: 0 };
      cancel = deps.workerClient
        .cancel(candidate.endpoint, opened.jobId, delivered.tokens, CANCEL_TIMEOUT_MS)
        .catch((error: unknown) => {
          log.warn({ err: error }, "worker cancel failed");
          return undefined;
        })
        .finally(() => attempt.abort(new WorkerJobError("client gone")));
    };
    sink.clientGone.addEventListener("abort", onGone, { once: true });
    const attemptStartedAt = Date.now();
    let backend = deps.workers.backendOf(candidate.address) ?? "unknown";
    let ok = false;
    deps.workers.jobStarted(candidate.address);
    try {
      for await (const event of deps.workerClient.runJob(candidate.endpoint, payload, signal)) {
        if (cancel) continue;
        const step = handleEvent(event);
        if (step === "ack") {
          clearTimeout(ackTimer);
          if (event.type === "ack") {
            if (!isAddressEqual(event.worker as Hex, candidate.address))
              throw new WorkerJobError(`acknowledged as ${event.worker}`);
            backend = event.backend;
          }
          await deps.jobs.transition(opened.jobId, ["pending", "processing"], "processing", {
            worker: candidate.address.toLowerCase(),
            processing_at: new Date(),
          });
          deps.onJobProcessing?.();
        } else if (event.type === "token") {
          if (tokens === 0) {
            clearTimeout(ackTimer);
            deps.latency.record(candidate.address, prepared.model.id, Date.now() - attemptStartedAt);
            const firstTokenMs = Date.now() - opened.startedAt;
            gatewayMetrics.timeToFirstToken.observe({ model: prepared.model.id }, firstTokenMs / 1000);
            // Kept for the models' trust figures; never holds up the stream.
            void deps.jobs
              .update(opened.jobId, { first_token_ms: firstTokenMs })
              .catch((error: unknown) => log.warn({ err: error }, "could not record the time to first token"));
            serving = candidate;
            servingNotified = true;
            sink.onServing(candidate.address, backend);
          }
          text += event.text;
          tokens++;
          sink.onToken(event.text);
        } else if (event.type === "error") {
          throw new WorkerJobError(`worker error ${event.code}: ${event.message}`);
        } else if (event.type === "done") {
          ok = true;
          serving = candidate;
          if (!servingNotified) sink.onServing(candidate.address, backend);
          return await finish(deps, prepared, opened, candidate, backend, { text, tokens }, event);
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
        return timedOut(deps, opened, candidate);
      }
      if (tokens === 0) {
        log.warn(
          { worker: candidate.address, err: (error as Error).message },
          "worker failed before the first token; failing over",
        );
        continue;
      }
      log.error({ worker: candidate.address, err: (error as Error).message, tokens }, "worker failed mid-stream");
      await failJob(deps, opened, `worker failed after ${tokens} tokens: ${(error as Error).message}`);
      return {
        kind: "error",
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
      sink.clientGone.removeEventListener("abort", onGone);
      deps.workers.jobEnded(candidate.address, ok ? "ok" : "failed");
    }
  }
}

function handleEvent(event: WorkerEvent): "ack" | "other" {
  return event.type === "ack" ? "ack" : "other";
}

function workerPayload(deps: GatewayDeps, prepared: PreparedCompletion, opened: OpenedJob): WorkerJobPayload {
  const { request } = prepared;
  return {
    job_id: opened.jobId,
    job_id_bytes32: opened.jobKey,
    model: prepared.model.id,
    messages: request.messages,
    max_tokens: prepared.maxTokens,
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
  deps: GatewayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  worker: WorkerCandidate,
  backend: string,
  relayed: { text: string; tokens: number },
  done: Extract<WorkerEvent, { type: "done" }>,
): Promise<RelayOutcome> {
  await opened.lockMined;
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
  if (!check.ok) {
    deps.logger.error(
      { job_id: opened.jobId, worker: worker.address, reason: check.reason },
      "receipt rejected; not settling",
    );
    await failJob(deps, opened, `receipt rejected: ${check.reason}`);
    return {
      kind: "error",
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
  const ticket = await settleJob(deps, opened, done.receipt, done.signature as Hex, worker.address);
  const creditsCharged = Number(chargeFor(prepared.model, done.receipt.completionTokens, BigInt(opened.creditsLocked)));
  return {
    kind: "completed",
    text: relayed.text,
    finishReason: done.finish_reason,
    promptTokens: done.receipt.promptTokens,
    completionTokens: done.receipt.completionTokens,
    worker: worker.address,
    backend,
    ticket,
    creditsCharged,
    creditsRemaining: opened.balanceAfterLock + opened.creditsLocked - creditsCharged,
  };
}

async function clientGone(
  deps: GatewayDeps,
  prepared: PreparedCompletion,
  opened: OpenedJob,
  worker: WorkerCandidate | undefined,
  cancel: { response: CancelResponse | undefined; delivered: { text: string; tokens: number } } | undefined,
): Promise<RelayOutcome> {
  const log = deps.logger.child({ job_id: opened.jobId });
  if (!worker || !cancel || cancel.delivered.tokens === 0) {
    await failJob(deps, opened, "client disconnected before any token was delivered");
    return { kind: "client_gone", worker: worker?.address };
  }
  if (!cancel.response) {
    await failJob(deps, opened, "client disconnected and the worker gave no receipt for the delivered part");
    return { kind: "client_gone", worker: worker.address };
  }
  await opened.lockMined.catch(() => undefined);
  // Never locked: nothing to settle (and nothing was charged).
  if (opened.lockRefused.aborted) return { kind: "client_gone", worker: worker.address };
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
    await failJob(deps, opened, `cancel receipt rejected: ${check.reason}`);
    return { kind: "client_gone", worker: worker.address };
  }
  log.info({ delivered_tokens: cancel.delivered.tokens }, "client disconnected; settling the delivered part");
  const ticket = await settleJob(deps, opened, receipt, signature as Hex, worker.address);
  const creditsCharged = Number(chargeFor(prepared.model, receipt.completionTokens, BigInt(opened.creditsLocked)));
  return {
    kind: "client_gone",
    worker: worker.address,
    ticket,
    creditsCharged,
    creditsRemaining: opened.balanceAfterLock + opened.creditsLocked - creditsCharged,
  };
}

/** The chain refused the job's lock: the client gets the refusal; the job is already failed, nothing charged. */
function lockRefused(opened: OpenedJob, prepared: PreparedCompletion, worker: Hex | undefined): RelayOutcome {
  const reason: unknown = opened.lockRefused.reason;
  const error = reason instanceof ApiError ? reason : new ApiError("service_unavailable");
  return { kind: "error", error: withJobHeaders(error, opened, prepared, worker), worker };
}

async function timedOut(
  deps: GatewayDeps,
  opened: OpenedJob,
  worker: WorkerCandidate | undefined,
): Promise<RelayOutcome> {
  deps.logger.warn({ job_id: opened.jobId }, "job timed out");
  // The chain refunds only after its own deadline; a gateway configured with a shorter timeout fails the job
  // instead, which returns the escrow the same way (and the API still reports the job refunded).
  const chainTimeoutMs = deps.deployment.params.jobTimeout * 1000;
  const refundTx =
    deps.config.JOB_TIMEOUT_MS >= chainTimeoutMs
      ? await refundJob(deps, { ...opened, deadline: opened.deadline }, true)
      : await failJob(deps, opened, "job timeout", true);
  const error = new ApiError("job_timeout", {
    details: { job_id: opened.jobId, credits_refunded: opened.creditsLocked, refund_tx: refundTx ?? null },
    headers: jobHeaders(opened, worker?.address, opened.balanceAfterLock + opened.creditsLocked),
  });
  return { kind: "error", error, worker: worker?.address };
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

function withJobHeaders(
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
