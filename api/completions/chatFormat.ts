import type { Response } from "express";
import { errorBody } from "../errors/ApiError.js";
import type { StoredResponse } from "../jobs/idempotencyStore.js";
import {
  chunkObject,
  completionIdOf,
  completionObject,
  contentChunkEvent,
  usageChunkObject,
  type CompletionMeta,
} from "./completionObjects.js";
import type { CompletionFormat, CompletionProtocol } from "./completionFormat.js";
import { parseChatRequest, type ChatCompletionRequest } from "./requestSchema.js";
import { doneWasWritten, endSse, startSse, writeDone, writeSse, writeSseEvent } from "./writeSse.js";

/** POST /v1/chat/completions as a protocol of the shared pipeline: the body is the job itself. */
export function chatProtocol(maxMessages: number, docsUrl: string): CompletionProtocol<ChatCompletionRequest> {
  return {
    parse: (body) => parseChatRequest(body, maxMessages),
    jobOf: (request) => request,
    // The request as validated, not the raw body: every field that changes the job, nothing the gateway ignores
    // (an ignored field may be nested deeper than JSON.stringify can follow).
    fingerprintOf: (request) => request,
    formatFor: (request, job) =>
      chatFormat(
        { id: completionIdOf(job.jobId), created: job.created, model: job.model, systemFingerprint: "unknown" },
        request.includeUsage,
        docsUrl,
      ),
    mapError: (_request, error) => error,
    replayStream,
  };
}

/** Chat completion chunks (spec, "Streaming response"), or the chat completion object. */
function chatFormat(meta: CompletionMeta, includeUsage: boolean, docsUrl: string): CompletionFormat {
  let firstChunk = true;
  // Built once the fingerprint (the serving backend) is known: every chunk carries it.
  let firstEvent: ((content: string) => string) | undefined;
  let nextEvent: ((content: string) => string) | undefined;
  return {
    streamStarted(_res, backend) {
      meta.systemFingerprint = backend;
    },
    token(res, text) {
      if (firstChunk) {
        firstChunk = false;
        writeSseEvent(res, (firstEvent ??= contentChunkEvent(meta, true))(text));
      } else {
        writeSseEvent(res, (nextEvent ??= contentChunkEvent(meta, false))(text));
      }
    },
    streamFinished(res, result) {
      if (firstChunk) writeSse(res, chunkObject(meta, { role: "assistant", content: "" }, null));
      writeSse(res, chunkObject(meta, {}, result.finishReason));
      if (includeUsage) writeSse(res, usageChunkObject(meta, result.usage));
      writeDone(res);
    },
    streamCompleted: (res) => doneWasWritten(res),
    streamFailed(res, error) {
      writeSse(res, errorBody(error, docsUrl));
    },
    endStream: endSse,
    body(result) {
      meta.systemFingerprint = result.backend;
      return completionObject(meta, result.text, result.finishReason, result.usage);
    },
  };
}

/** A stored stream is replayed as one content chunk, the final chunk, usage if asked, then the trailer. */
function replayStream(res: Response, stored: StoredResponse): void {
  const completion = stored.body as ReturnType<typeof completionObject>;
  const meta: CompletionMeta = {
    id: completion.id,
    created: completion.created,
    model: completion.model,
    systemFingerprint: completion.system_fingerprint,
  };
  const { "x-service-settlement-tx": settlementTx, ...headers } = stored.headers;
  startSse(res, headers);
  const choice = completion.choices[0];
  writeSse(res, chunkObject(meta, { role: "assistant", content: choice?.message.content ?? "" }, null));
  writeSse(res, chunkObject(meta, {}, choice?.finish_reason ?? "stop"));
  if (stored.includeUsage) writeSse(res, usageChunkObject(meta, completion.usage));
  endSse(res, settlementTx);
}
