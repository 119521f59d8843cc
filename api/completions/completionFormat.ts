import type { Response } from "express";
import type { ApiError } from "../errors/ApiError.js";
import type { StoredResponse } from "../jobs/idempotencyStore.js";
import type { FinishReason, Usage } from "./completionObjects.js";
import type { ChatCompletionRequest } from "./requestSchema.js";

/** What a finished job gives its answer: the relayed text, why it stopped, and the tokens with the charge. */
export interface CompletionResult {
  text: string;
  finishReason: FinishReason;
  usage: Usage;
  /** The worker's backend label (`system_fingerprint`, `x-service-backend`). */
  backend: string;
}

/**
 * The wire protocol of one completion endpoint (chat completions, Responses): how the one job pipeline
 * (`runCompletion` in api/endpoints/v1/chatCompletions.create.ts: escrow, relay, lifecycle, charge) is written to
 * the client. Everything that moves money stays in the pipeline; a format only writes bytes.
 */
export interface CompletionFormat<Body = unknown> {
  /** The stream is open (status and `x-service-*` headers sent): whatever precedes the first token. */
  streamStarted(res: Response, backend: string): void;
  token(res: Response, text: string): void;
  /** The answer is complete and charged: its last events (the settlement transaction may follow as a trailer). */
  streamFinished(res: Response, result: CompletionResult): void;
  /** Whether the stream's answer was completed: after that nothing but the trailer may follow. */
  streamCompleted(res: Response): boolean;
  /** An error after the stream started: written in the stream, which then ends. */
  streamFailed(res: Response, error: ApiError): void;
  /** Closes the stream, with the settlement transaction as trailer when known. */
  endStream(res: Response, settlementTx: string | undefined): void;
  /** The whole answer (non-streamed, and what an idempotent retry replays). */
  body(result: CompletionResult): Body;
}

/** The job as a format names it: ids and timestamps derive from the job id. */
export interface FormattedJob {
  jobId: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/**
 * One completion endpoint's protocol around the shared pipeline (`completionHandler`): how its body becomes the
 * internal job (a validated chat completion request), how the job is written back, and how an idempotent retry
 * replays a stored stream.
 */
export interface CompletionProtocol<Parsed> {
  parse(body: unknown): Parsed;
  /** The internal job: what is priced, escrowed and sent to the worker. */
  jobOf(parsed: Parsed): ChatCompletionRequest;
  /** What an Idempotency-Key compares: every field that changes the job or its answer. */
  fingerprintOf(parsed: Parsed): unknown;
  formatFor(parsed: Parsed, job: FormattedJob): CompletionFormat;
  /** Renames the internal job's fields in an error (`messages.1.content`) after the endpoint's own (`input`). */
  mapError(parsed: Parsed, error: ApiError): ApiError;
  /** Answers an idempotent retry of a stream from the stored answer (`body` of its format, headers, trailer). */
  replayStream(res: Response, stored: StoredResponse): void;
}
