import type { Response } from "express";
import { WHOLE_DELIVERY_HOLD_MS, type TokenDelivery, type WorkerEventLine } from "../shared/workerProtocol/index.js";
import type { Backend, Generation, GenerationOutcome, GenerationRequest } from "./backends/types.js";
import { BackendError } from "./backends/types.js";
import { issueReceipt } from "./issueReceipt.js";
import type { JobRecord } from "./jobRegistry.js";
import { createNdjsonWriter } from "./ndjsonWriter.js";
import { unixSeconds } from "./unixSeconds.js";
import type { WorkerContext } from "./workerContext.js";
import { workerMetrics } from "./metrics.js";

function describe(reason: unknown): string {
  return reason instanceof Error ? reason.message : "cancelled";
}

async function closeGeneration(generation: Generation): Promise<void> {
  // `return` needs a value of the generator's return type; nobody reads it.
  await generation.return(undefined as unknown as GenerationOutcome).catch(() => undefined);
}

/** Tokens held past the first under `delivery: "whole"` are written once this many wait, whatever their age. */
const WHOLE_DELIVERY_MAX_HELD = 256;

/**
 * Runs one job and streams it as NDJSON: ack, the tokens as they are produced, then done (with the signed receipt)
 * or error. `stream` delivery writes a line per token at once; `whole` writes the first at once (the gateway's
 * first-token time and failover point) and gathers the rest into `tokens` lines, written when
 * `WHOLE_DELIVERY_HOLD_MS` passed since the last write or in the same write as the job's last line. Aborting
 * `record.controller` (cancel, client gone) stops the backend.
 */
export async function streamJob(
  context: WorkerContext,
  record: JobRecord,
  backend: Backend,
  request: GenerationRequest,
  delivery: TokenDelivery,
  res: Response,
): Promise<void> {
  const { config, signer, logger } = context;
  const log = logger.child({ job_id: record.jobId, model: record.model });
  const signal = record.controller.signal;
  const writer = createNdjsonWriter(res);
  const startedAt = performance.now();

  res.status(200);
  res.setHeader("content-type", "application/x-ndjson; charset=utf-8");
  res.setHeader("cache-control", "no-cache, no-transform");
  res.setHeader("x-accel-buffering", "no");
  res.flushHeaders();
  // Small lines must leave at once rather than wait for Nagle's algorithm to batch them.
  res.socket?.setNoDelay(true);

  const generation = backend.generate(request, signal);
  let finished = false;
  let held: string[] = [];
  let lastWriteAt = 0;
  /** The held tokens' line (emptying the hold), to lead the job's last write; none when nothing is held. */
  const heldLines = (): WorkerEventLine[] => {
    if (held.length === 0) return [];
    const line: WorkerEventLine = { type: "tokens", texts: held };
    held = [];
    return [line];
  };
  try {
    await writer.write({ type: "ack", worker: signer.address, backend: backend.kind });
    if (config.fault === "fail_before_first_token") {
      throw new BackendError("backend_error", "injected fault: fail_before_first_token");
    }
    let outcome: GenerationOutcome | undefined;
    while (!signal.aborted) {
      const step = await generation.next();
      if (step.done) {
        outcome = step.value;
        break;
      }
      if (signal.aborted) break;
      record.tokens.push(step.value);
      record.tokenAt.push(unixSeconds());
      if (record.tokens.length === 1)
        workerMetrics.timeToFirstToken.observe({ model: record.model }, (performance.now() - startedAt) / 1000);
      if (delivery === "stream" || record.tokens.length === 1) {
        await writer.write({ type: "token", text: step.value });
        lastWriteAt = performance.now();
      } else {
        held.push(step.value);
        if (held.length >= WHOLE_DELIVERY_MAX_HELD || performance.now() - lastWriteAt >= WHOLE_DELIVERY_HOLD_MS) {
          await writer.write(heldLines()[0]!);
          lastWriteAt = performance.now();
        }
      }
      if (config.fault === "fail_after_first_token") {
        throw new BackendError("backend_error", "injected fault: fail_after_first_token");
      }
    }
    if (signal.aborted || outcome === undefined) throw signal.reason;
    finished = true;

    if (outcome.usage) record.promptTokens = outcome.usage.promptTokens;
    const completionTokens = outcome.usage?.completionTokens ?? record.tokens.length;
    const { receipt, signature } = issueReceipt(signer, config.fault, {
      jobIdBytes32: record.jobIdBytes32,
      escrow: record.escrow,
      text: record.tokens.join(""),
      promptTokens: record.promptTokens,
      completionTokens,
      finalTokenAt: record.tokenAt.at(-1) ?? record.acceptedAt,
    });
    record.state = "done";
    writer.end(...heldLines(), {
      type: "done",
      finish_reason: outcome.finishReason,
      usage: { prompt_tokens: record.promptTokens, completion_tokens: completionTokens },
      receipt,
      signature,
    });
    log.info(
      {
        finish_reason: outcome.finishReason,
        completion_tokens: completionTokens,
        ms: Math.round(performance.now() - startedAt),
      },
      "job done",
    );
  } catch (error) {
    if (signal.aborted) {
      if (record.state === "running") record.state = "cancelled";
      writer.end(...heldLines(), { type: "error", code: "cancelled", message: describe(signal.reason) });
      log.info({ emitted_tokens: record.tokens.length, reason: describe(signal.reason) }, "job cancelled");
    } else if (error instanceof BackendError) {
      record.state = "failed";
      writer.end(...heldLines(), { type: "error", code: error.code, message: error.message });
      log.warn({ code: error.code, err: error.message }, "job failed");
    } else {
      record.state = "failed";
      writer.end(...heldLines(), { type: "error", code: "internal_error", message: "internal worker error" });
      log.error({ err: error }, "job crashed");
    }
  } finally {
    if (!finished) await closeGeneration(generation);
    context.registry.release(record);
    workerMetrics.jobs.inc({ model: record.model, outcome: record.state });
    workerMetrics.tokens.inc({ model: record.model }, record.tokens.length);
    if (!res.writableEnded) res.end();
  }
}
