import type { Request, Response } from "express";
import { issueReceipt } from "../issueReceipt.js";
import { cancelPayloadSchema, type CancelResponse } from "../../shared/workerProtocol/index.js";
import { WorkerError } from "../workerError.js";
import type { WorkerContext } from "../workerContext.js";
import { invalidRequest } from "./invalidRequest.js";

/**
 * `POST /v1/jobs/{job_id}/cancel`: stop generating and sign a receipt for the first `delivered_tokens` tokens,
 * so the gateway settles only what its client received. Also answers for jobs that already ended.
 */
export function cancelJob(context: WorkerContext) {
  return async (req: Request, res: Response): Promise<void> => {
    const parsed = cancelPayloadSchema.safeParse(req.body);
    if (!parsed.success) throw invalidRequest(parsed.error);
    const jobId = String(req.params.job_id);
    const record = context.registry.get(jobId);
    if (!record) throw new WorkerError("job_not_found", `no job ${jobId} on this worker`);

    // Stop first: whatever else is wrong with the request, the gateway wants no more tokens.
    if (record.state === "running") {
      record.state = "cancelled";
      record.controller.abort(new Error("cancelled by the gateway"));
    }
    const delivered = parsed.data.delivered_tokens;
    if (delivered > record.tokens.length) {
      throw new WorkerError(
        "delivered_tokens_exceed_emitted",
        `delivered_tokens ${delivered} exceeds the ${record.tokens.length} tokens emitted`,
        { emitted_tokens: record.tokens.length },
      );
    }
    const text = record.tokens.slice(0, delivered).join("");
    const { receipt, signature } = issueReceipt(context.signer, context.config.fault, {
      jobIdBytes32: record.jobIdBytes32,
      escrow: record.escrow,
      text,
      promptTokens: record.promptTokens,
      completionTokens: delivered,
      finalTokenAt: delivered > 0 ? (record.tokenAt[delivered - 1] ?? record.acceptedAt) : record.acceptedAt,
    });
    context.logger.info({ job_id: jobId, delivered_tokens: delivered }, "job cancel receipt issued");
    res.json({ receipt, signature, text } satisfies CancelResponse);
  };
}
