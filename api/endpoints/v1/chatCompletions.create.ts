import type { Request, RequestHandler, Response } from "express";
import type { Hex } from "viem";
import { creditsToUsdg } from "@credit-metered/client";
import { chatProtocol } from "../../completions/chatFormat.js";
import { usageOf, type ServiceCharge } from "../../completions/completionObjects.js";
import type { CompletionFormat, CompletionProtocol, FormattedJob } from "../../completions/completionFormat.js";
import { jobHeaders } from "../../completions/relayCompletion.js";
import type { ChatCompletionRequest } from "../../completions/requestSchema.js";
import { startSse } from "../../completions/writeSse.js";
import { watchClientGone } from "../../completions/watchClientGone.js";
import type { GatewayDeps } from "../../deps.js";
import { ApiError } from "../../errors/ApiError.js";
import { authOf } from "../../http/middleware/authenticate.js";
import { NO_QUERY, parseQuery } from "../../http/parseQuery.js";
import { bodyHashOf, type StoredResponse } from "../../jobs/idempotencyStore.js";
import type { Endpoint } from "../endpoint.js";
import { chatCompletionRequestSchema, chatCompletionSchema } from "@credit-metered/client/http";
import { COMPLETION_ERRORS, IDEMPOTENCY_KEY_HEADER, JOB_HEADERS } from "../../openapi/operation.js";

/** How long a whole completion waits for its settlement transaction to be sent, for the header. */
const SETTLEMENT_HEADER_WAIT_MS = 10_000;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * POST /v1/chat/completions (spec): HTTP in and out of the completion pipeline (completions/completionPipeline.ts:
 * check, escrow, run, conclude). This file parses, claims the idempotency key, and writes what the pipeline returns
 * — the answer with its charge and credits remaining, or the error — as headers, a JSON body or events.
 */
export const createChatCompletion: Endpoint<GatewayDeps> = {
  method: "post",
  path: "/v1/chat/completions",
  access: "apiKey",
  openapi: {
    operationId: "createChatCompletion",
    summary: "Create a chat completion (credits locked in escrow first, settled on chain after)",
    tag: "Completions",
    requestHeaders: [IDEMPOTENCY_KEY_HEADER],
    requestBody: chatCompletionRequestSchema,
    response: {
      status: 200,
      description:
        "The completion; with `stream: true` a server-sent event stream of `data: <ChatCompletionChunk>` " +
        "events ending with `data: [DONE]`.",
      body: chatCompletionSchema,
      headers: [...JOB_HEADERS, "x-request-id"],
      eventStream: "`data: <ChatCompletionChunk JSON>` events (see the schema), then `data: [DONE]`.",
    },
    errors: COMPLETION_ERRORS,
  },
  handler: (deps) => completionHandler(deps, chatProtocol(deps.config.MAX_MESSAGES, deps.config.DOCS_URL)),
};

/**
 * The handler of a completion endpoint (chat completions, Responses: api/responses/): one pipeline, one money path;
 * the protocol only translates the body into the job and the job's events into its wire format.
 */
export function completionHandler<Parsed>(deps: GatewayDeps, protocol: CompletionProtocol<Parsed>): RequestHandler {
  return async (req, res) => {
    // Watched from the first instant: a client gone at any point is never charged for what it did not receive.
    const clientGone = watchClientGone(req, res);
    const auth = authOf(res);
    parseQuery(req, NO_QUERY);
    const parsed = protocol.parse(req.body);
    const request = protocol.jobOf(parsed);
    const idempotencyKey = idempotencyKeyOf(req);
    if (idempotencyKey !== undefined) {
      const claim = await deps.idempotency.claim(
        auth.keyHash,
        idempotencyKey,
        bodyHashOf(protocol.fingerprintOf(parsed)),
      );
      if (claim.kind === "reused") throw new ApiError("idempotency_key_reused");
      if (claim.kind === "in_progress") throw new ApiError("idempotency_key_in_progress");
      if (claim.kind === "replay") {
        replay(res, claim.response, protocol);
        return;
      }
    }
    // The record is completed before the last byte goes out, so a retry sent right after the answer replays it.
    let stored = false;
    const remember = async (response: StoredResponse) => {
      if (idempotencyKey === undefined) return;
      await deps.idempotency.complete(
        auth.keyHash,
        idempotencyKey,
        response.headers["x-service-job-id"] ?? "",
        response,
      );
      stored = true;
    };
    try {
      await runCompletion(
        deps,
        req,
        res,
        auth,
        request,
        remember,
        (job) => protocol.formatFor(parsed, job),
        clientGone,
      );
    } catch (error) {
      throw error instanceof ApiError ? protocol.mapError(parsed, error) : error;
    } finally {
      if (idempotencyKey !== undefined && !stored)
        await deps.idempotency.release(auth.keyHash, idempotencyKey).catch(() => undefined);
    }
  };
}

function idempotencyKeyOf(req: Request): string | undefined {
  const value = req.headers["idempotency-key"];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new ApiError("invalid_request", {
      param: "Idempotency-Key",
      message: "Idempotency-Key must be 1-255 printable ASCII characters.",
    });
  }
  return value;
}

/** Runs one completion through the pipeline and answers it (headers, body or events) from what comes back. */
async function runCompletion(
  deps: GatewayDeps,
  req: Request,
  res: Response,
  auth: { wallet: Hex; keyHash: Hex },
  request: ChatCompletionRequest,
  remember: (response: StoredResponse) => Promise<void>,
  formatFor: (job: FormattedJob) => CompletionFormat,
  clientGone: AbortSignal,
): Promise<void> {
  const pipeline = deps.completions;
  const prepared = await pipeline.prepare(auth, request);
  // Gone before the escrow: nothing is locked, nothing is answered (the connection is dropped, if anything of it
  // is left). From here on the relay sees the signal.
  if (clientGone.aborted) {
    res.destroy();
    return;
  }
  const opened = await pipeline.open(prepared);
  deps.logger.info(
    { job_id: opened.jobId, model: prepared.model.id, stream: request.stream, request_id: req.headers["x-request-id"] },
    "job opened",
  );

  const format = formatFor({
    jobId: opened.jobId,
    created: Math.floor(opened.startedAt / 1000),
    model: prepared.model.id,
  });
  let streamStarted = false;

  try {
    const outcome = await pipeline.run(prepared, opened, {
      clientGone,
      deliversIncrementally: request.stream,
      onServing(worker, backend) {
        if (request.stream && !clientGone.aborted) {
          // Worst case until settlement: the lock is gone, the unused part comes back when the job settles.
          startSse(res, { ...jobHeaders(opened, worker, opened.balanceAfterLock), "x-service-backend": backend });
          streamStarted = true;
          format.streamStarted(res, backend);
        }
      },
      onToken(text) {
        if (!request.stream || clientGone.aborted) return;
        format.token(res, text);
      },
    });

    // The job is settled, failed or refunded (the chain action included) before the client hears how it ended.
    const concluded = await pipeline.conclude(prepared, opened, outcome);
    if (concluded.kind === "client_gone") return;
    if (concluded.kind === "not_charged") {
      if (!streamStarted) throw concluded.error;
      format.streamFailed(res, concluded.error);
      format.endStream(res, undefined);
      return;
    }
    const { answer, charge, settlement } = concluded;
    const serviceCharge = (settlementTx: Hex | undefined): ServiceCharge => ({
      job_id: opened.jobId,
      credits_charged: charge.creditsCharged,
      usdg_value: creditsToUsdg(charge.creditsCharged),
      credits_remaining: charge.creditsRemaining,
      escrow_tx: opened.escrowTx,
      settlement_tx: settlementTx ?? null,
      worker_address: charge.worker,
    });
    const headersWith = (settlementTx: Hex | undefined) => ({
      ...jobHeaders(opened, charge.worker, charge.creditsRemaining),
      ...(settlementTx ? { "x-service-settlement-tx": settlementTx } : {}),
      "x-service-backend": answer.backend,
    });
    if (request.stream) {
      // The receipt is stored (the charge is now certain): the client gets the end of the answer, its charge and
      // [DONE] at once, never held for the chain (api/README.md "When the connection breaks"). The settlement
      // transaction follows as the trailer; the connection stays open only for that.
      const knownTx = await settlementTxIfSent(settlement.submitted);
      const usageNow = usageOf(charge.promptTokens, charge.completionTokens, serviceCharge(knownTx));
      format.streamFinished(res, { ...answer, usage: usageNow });
      const settlementTx = knownTx ?? (await settlementTxOf(settlement.submitted));
      const usage = usageOf(charge.promptTokens, charge.completionTokens, serviceCharge(settlementTx));
      const completion = format.body({ ...answer, usage });
      await remember({
        status: 200,
        headers: headersWith(settlementTx),
        body: completion,
        stream: true,
        includeUsage: request.includeUsage,
      });
      format.endStream(res, settlementTx);
      return;
    }
    const settlementTx = await settlementTxOf(settlement.submitted);
    const usage = usageOf(charge.promptTokens, charge.completionTokens, serviceCharge(settlementTx));
    const completion = format.body({ ...answer, usage });
    const headers = headersWith(settlementTx);
    await remember({ status: 200, headers, body: completion, stream: false, includeUsage: false });
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(200).json(completion);
  } catch (error) {
    if (streamStarted) {
      deps.logger.error({ err: error, job_id: opened.jobId }, "error after the stream started");
      if (!format.streamCompleted(res))
        format.streamFailed(res, error instanceof ApiError ? error : new ApiError("internal_error"));
      format.endStream(res, undefined);
      return undefined;
    }
    if (error instanceof ApiError) throw error;
    // Unexpected: return the escrow now rather than at the deadline.
    await pipeline.failUnexpected(opened, error as Error);
    throw error;
  } finally {
    pipeline.finished(opened);
  }
}

/** The settlement transaction if it was already sent; never waits. */
async function settlementTxIfSent(submitted: Promise<Hex>): Promise<Hex | undefined> {
  const notYet = Symbol("not yet");
  // A settled promise resolves before a macrotask; one turn of the event loop tells whether it already has.
  const value = await Promise.race([
    submitted.catch(() => undefined),
    new Promise<typeof notYet>((resolve) => setImmediate(() => resolve(notYet))),
  ]);
  return value === notYet ? undefined : value;
}

async function settlementTxOf(submitted: Promise<Hex>): Promise<Hex | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SETTLEMENT_HEADER_WAIT_MS);
  });
  try {
    return await Promise.race([submitted.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Answers an idempotent retry with the first response; a stream in the protocol's own events. */
function replay<Parsed>(res: Response, stored: StoredResponse, protocol: CompletionProtocol<Parsed>): void {
  res.setHeader("idempotent-replayed", "true");
  if (stored.stream) {
    protocol.replayStream(res, stored);
    return;
  }
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.status(stored.status).json(stored.body);
}
