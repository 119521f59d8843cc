import type { Response } from "express";
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

/**
 * Runs one job and streams it as NDJSON: ack, one line per token as it is produced, then done (with the
 * signed receipt) or error. Aborting `record.controller` (cancel, client gone) stops the backend.
 */
export async function streamJob(
  context: WorkerContext,
  record: JobRecord,
  backend: Backend,
  request: GenerationRequest,
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
      await writer.write({ type: "token", text: step.value });
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
    writer.end({
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
      writer.end({ type: "error", code: "cancelled", message: describe(signal.reason) });
      log.info({ emitted_tokens: record.tokens.length, reason: describe(signal.reason) }, "job cancelled");
    } else if (error instanceof BackendError) {
      record.state = "failed";
      writer.end({ type: "error", code: error.code, message: error.message });
      log.warn({ code: error.code, err: error.message }, "job failed");
    } else {
      record.state = "failed";
      writer.end({ type: "error", code: "internal_error", message: "internal worker error" });
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
