import type { Response } from "express";
import type { ResponseObject } from "@credit-metered/client/http";
import type {
  CompletionFormat,
  CompletionProtocol,
  CompletionResult,
  FormattedJob,
} from "../completions/completionFormat.js";
import { startSse } from "../completions/writeSse.js";
import { errorBody } from "../errors/ApiError.js";
import type { StoredResponse } from "../jobs/idempotencyStore.js";
import { parseResponsesRequest, responsesErrorOf, type ResponsesRequest } from "./parseResponsesRequest.js";
import {
  closingEvents,
  deltaEvent,
  messageIdOf,
  openingEvents,
  outputMessage,
  responseIdOf,
  responseObject,
  responseUsageOf,
  statusOf,
  type ResponseMeta,
  type UnnumberedEvent,
} from "./responseObjects.js";

/**
 * POST /v1/responses as a protocol of the chat completion pipeline (api/completions/completionFormat.ts): the body
 * is translated into a chat completion job; the job's tokens are written as Responses events.
 */
export function responsesProtocol(maxMessages: number, docsUrl: string): CompletionProtocol<ResponsesRequest> {
  return {
    parse: (body) => parseResponsesRequest(body, maxMessages),
    jobOf: (request) => request.job,
    // Marked, so a key used first on /v1/chat/completions never replays a chat completion here.
    fingerprintOf: (request) => ({ responses: request }),
    formatFor: (request, job) => responsesFormat(metaOf(request, job), docsUrl),
    mapError: responsesErrorOf,
    replayStream,
  };
}

function metaOf(request: ResponsesRequest, job: FormattedJob): ResponseMeta {
  return {
    id: responseIdOf(job.jobId),
    messageId: messageIdOf(job.jobId),
    createdAt: job.created,
    model: job.model,
    request,
  };
}

/** A stream's events in order, each numbered (`sequence_number` from 0), framed `event: <type>` + `data:`. */
class EventWriter {
  private next = 0;
  completed = false;

  constructor(private readonly res: Response) {}

  write(event: UnnumberedEvent): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    const numbered = { ...event, sequence_number: this.next++ };
    this.res.write(`event: ${event.type}\ndata: ${JSON.stringify(numbered)}\n\n`);
  }

  /** No `[DONE]` (OpenAI's Responses streams end with their last event); the settlement trailer if known. */
  end(settlementTx: string | undefined): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (settlementTx) this.res.addTrailers({ "x-service-settlement-tx": settlementTx });
    this.res.end();
  }
}

function finalResponse(meta: ResponseMeta, result: CompletionResult): ResponseObject {
  const status = statusOf(result.finishReason);
  return responseObject(meta, {
    status,
    output: [outputMessage(meta, status, result.text)],
    usage: responseUsageOf(result.usage),
  });
}

function responsesFormat(meta: ResponseMeta, docsUrl: string): CompletionFormat<ResponseObject> {
  let events: EventWriter | undefined;
  const writerOf = (res: Response) => (events ??= new EventWriter(res));
  return {
    streamStarted(res) {
      const writer = writerOf(res);
      for (const event of openingEvents(meta)) writer.write(event);
    },
    token(res, text) {
      writerOf(res).write(deltaEvent(meta, text));
    },
    streamFinished(res, result) {
      const writer = writerOf(res);
      for (const event of closingEvents(meta, finalResponse(meta, result))) writer.write(event);
      writer.completed = true;
    },
    streamCompleted: () => events?.completed ?? false,
    streamFailed(res, error) {
      const writer = writerOf(res);
      writer.write({
        type: "response.failed",
        response: responseObject(meta, {
          status: "failed",
          output: [],
          usage: null,
          error: errorBody(error, docsUrl).error,
        }),
      });
      writer.completed = true;
    },
    endStream(res, settlementTx) {
      writerOf(res).end(settlementTx);
    },
    body: (result) => finalResponse(meta, result),
  };
}

/** A stored stream is replayed as the whole event sequence, the text in one delta, then the trailer. */
function replayStream(res: Response, stored: StoredResponse): void {
  const response = stored.body as ResponseObject;
  const meta: ResponseMeta = {
    id: response.id,
    messageId: response.output[0]?.id ?? messageIdOf(response.id.replace(/^resp_/, "")),
    createdAt: response.created_at,
    model: response.model,
    request: {
      instructions: response.instructions,
      maxOutputTokens: response.max_output_tokens,
      temperature: response.temperature,
      topP: response.top_p,
      user: response.user,
    },
  };
  const { "x-service-settlement-tx": settlementTx, ...headers } = stored.headers;
  startSse(res, headers);
  const writer = new EventWriter(res);
  for (const event of openingEvents(meta)) writer.write(event);
  writer.write(deltaEvent(meta, response.output[0]?.content[0]?.text ?? ""));
  for (const event of closingEvents(meta, response)) writer.write(event);
  writer.end(settlementTx);
}
