/** The contract every inference backend fulfils; the job runner knows nothing else about a backend. */

export type BackendKind = "simulated" | "openai" | "llama";

export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type GenerationRequest = {
  /** The model id the gateway asked for (the id this worker serves it under). */
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  stop: string[];
  temperature?: number;
  topP?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
};

export type FinishReason = "stop" | "length";

/** What a generation reports once its last token is out. Usage is present when the engine reported it. */
export type GenerationOutcome = {
  finishReason: FinishReason;
  usage?: { promptTokens: number; completionTokens: number };
};

/** Yields token texts as they are produced and returns the outcome; throws `BackendError` on failure. */
export type Generation = AsyncGenerator<string, GenerationOutcome, undefined>;

export interface Backend {
  readonly kind: BackendKind;
  /**
   * Prompt tokens as this backend counts them before generating (the receipt may use the engine's own count).
   * Asynchronous so that a long prompt is counted without holding the event loop (probes keep answering).
   */
  countPromptTokens(messages: readonly ChatMessage[]): Promise<number>;
  /** Stops promptly when `signal` aborts (the generator then ends or throws; the caller checks the signal). */
  generate(request: GenerationRequest, signal: AbortSignal): Generation;
}

export type BackendErrorCode = "backend_error" | "backend_timeout";

export class BackendError extends Error {
  constructor(
    readonly code: BackendErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "BackendError";
  }
}
