import type { Request, Response } from "express";
import type { Hex } from "viem";
import type { GenerationRequest } from "../backends/types.js";
import { jobIdToBytes32 } from "@credit-metered/client";
import { jobPayloadSchema } from "../../shared/workerProtocol/index.js";
import type { JobPayload } from "../../shared/workerProtocol/index.js";
import type { JobRecord } from "../jobRegistry.js";
import { streamJob } from "../streamJob.js";
import { unixSeconds } from "../unixSeconds.js";
import { WorkerError } from "../workerError.js";
import type { WorkerContext } from "../workerContext.js";
import { invalidRequest } from "./invalidRequest.js";

function generationRequestOf(payload: JobPayload): GenerationRequest {
  return {
    model: payload.model,
    messages: payload.messages,
    maxTokens: payload.max_tokens,
    stop: payload.stop ?? [],
    ...(payload.temperature == null ? {} : { temperature: payload.temperature }),
    ...(payload.top_p == null ? {} : { topP: payload.top_p }),
    ...(payload.seed == null ? {} : { seed: payload.seed }),
    ...(payload.frequency_penalty == null ? {} : { frequencyPenalty: payload.frequency_penalty }),
    ...(payload.presence_penalty == null ? {} : { presencePenalty: payload.presence_penalty }),
  };
}

function bytes32Of(jobId: string): Hex {
  try {
    return jobIdToBytes32(jobId);
  } catch {
    throw new WorkerError("invalid_request", "job_id is not a valid job id", { param: "job_id" });
  }
}

/** Holds the request open without a byte of answer until the gateway gives up (fault `never_answer`). */
function neverAnswer(context: WorkerContext, record: JobRecord, res: Response): Promise<void> {
  return new Promise((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      context.registry.release(record);
      if (!res.destroyed) res.destroy();
      resolve();
    };
    res.on("close", finish);
    record.controller.signal.addEventListener("abort", finish, { once: true });
  });
}

/** `POST /v1/jobs`: validate, register, then stream the job as NDJSON. */
export function postJob(context: WorkerContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const parsed = jobPayloadSchema.safeParse(req.body);
    if (!parsed.success) throw invalidRequest(parsed.error);
    const payload = parsed.data;

    const expectedBytes32 = bytes32Of(payload.job_id);
    if (payload.job_id_bytes32.toLowerCase() !== expectedBytes32) {
      throw new WorkerError("invalid_request", "job_id_bytes32 does not encode job_id", {
        param: "job_id_bytes32",
        expected: expectedBytes32,
      });
    }
    const backend = context.backends.get(payload.model);
    if (!backend) {
      throw new WorkerError("model_not_served", `this worker does not serve ${payload.model}`, {
        models: [...context.backends.keys()],
      });
    }
    // Counted before the checks of the worker's state, so that nothing can change between those checks and the
    // job's registration; the count yields to the event loop while it runs (a long prompt takes up to about a second).
    const promptTokens = await backend.countPromptTokens(payload.messages);
    if (context.draining) throw new WorkerError("worker_draining", "the worker is shutting down");
    if (context.registry.inflight() >= context.config.maxInflight) {
      throw new WorkerError("worker_busy", "the worker is at its concurrency limit", {
        max_inflight: context.config.maxInflight,
      });
    }
    if (context.registry.get(payload.job_id)?.state === "running") {
      throw new WorkerError("job_already_running", `${payload.job_id} is already running on this worker`);
    }

    const record: JobRecord = {
      jobId: payload.job_id,
      jobIdBytes32: expectedBytes32,
      escrow: { chainId: payload.escrow.chain_id, escrow: payload.escrow.address as Hex },
      model: payload.model,
      promptTokens,
      tokens: [],
      tokenAt: [],
      acceptedAt: unixSeconds(),
      controller: new AbortController(),
      state: "running",
    };
    context.registry.add(record);
    context.logger.info({ job_id: record.jobId, model: record.model, max_tokens: payload.max_tokens }, "job accepted");

    // The gateway hung up (its client left, or it timed out): stop spending compute on the job.
    res.on("close", () => {
      if (!res.writableFinished && record.state === "running") {
        record.state = "disconnected";
        record.controller.abort(new Error("the gateway closed the connection"));
      }
    });

    if (context.config.fault === "never_answer") return neverAnswer(context, record, res);
    await streamJob(context, record, backend, generationRequestOf(payload), payload.delivery, res);
  };
}
