import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { cancelResponseSchema, healthSchema, workerEventSchema } from "./workerProtocol.js";
import type { CancelResponse, WorkerEvent, WorkerHealth, WorkerJobPayload } from "./workerProtocol.js";

/** HTTP client of the worker protocol (docs/DESIGN.md), authenticated with the shared gateway token. */
export class WorkerClient {
  /** Connections to the workers are kept open between jobs, as fetch's pool kept them. */
  private readonly httpAgent = new HttpAgent({ keepAlive: true });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true });

  constructor(private readonly token: string) {}

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, "content-type": "application/json" };
  }

  async health(endpoint: string, timeoutMs: number): Promise<WorkerHealth> {
    const response = await fetch(new URL("/healthz", endpoint), {
      headers: this.headers(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new Error(`worker healthz answered ${response.status}`);
    return healthSchema.parse(await response.json());
  }

  /**
   * Starts a job; yields the worker's events in order. Aborting `signal` drops the connection. Sent with
   * `node:http` rather than `fetch`: a job's answer is a stream of small lines, and undici's fetch (WHATWG streams,
   * a Request and Response per job) was 18% of the gateway's CPU in the bench's profile (issue 26).
   */
  async *runJob(endpoint: string, payload: WorkerJobPayload, signal: AbortSignal): AsyncGenerator<WorkerEvent> {
    const response = await this.post(new URL("/v1/jobs", endpoint), JSON.stringify(payload), signal);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      let text = "";
      try {
        for await (const chunk of response as AsyncIterable<Buffer>) if (text.length < 200) text += chunk.toString();
      } catch {
        // The answer's status is what matters.
      }
      throw new WorkerRequestError(`worker answered ${status}: ${text.slice(0, 200)}`, status);
    }
    // A done or error line ends the answer, and the relay stops reading there: the rest (the end of the chunked
    // body) is then read off so the connection goes back to the pool; any other early stop drops the connection.
    let over = false;
    const lines = new NdjsonLines(response);
    try {
      for (;;) {
        const line = lines.shift();
        if (line === undefined) {
          if (lines.failure) throw lines.failure;
          if (lines.ended) return;
          await lines.arrival();
          continue;
        }
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          throw new WorkerRequestError(`worker sent a line that is not JSON: ${line.slice(0, 100)}`);
        }
        // Token lines are nearly all of a job's lines: their one shape is checked directly, the same result as the
        // schema's (unknown keys dropped) without its cost per token (issue 26).
        const token = json as { type?: unknown; text?: unknown } | null;
        if (typeof token === "object" && token !== null && token.type === "token" && typeof token.text === "string") {
          yield { type: "token", text: token.text };
          continue;
        }
        // A whole delivery's gathered tokens: the same shortcut for its one shape.
        const gathered = json as { type?: unknown; texts?: unknown } | null;
        if (
          typeof gathered === "object" &&
          gathered !== null &&
          gathered.type === "tokens" &&
          Array.isArray(gathered.texts) &&
          gathered.texts.length > 0 &&
          gathered.texts.every((text) => typeof text === "string")
        ) {
          yield { type: "tokens", texts: gathered.texts as string[] };
          continue;
        }
        const event = workerEventSchema.parse(json);
        if (event.type === "done" || event.type === "error") over = true;
        yield event;
      }
    } finally {
      lines.stop();
      if (!response.readableEnded) {
        if (over) response.resume();
        else response.destroy();
      }
    }
  }

  /**
   * POSTs `body` and resolves with the answer's head; its body streams (destroyed when `signal` aborts). The abort is
   * one listener of ours, removed when the connection's work is over, rather than `http.request`'s `signal` option:
   * that one goes through the streams' abort plumbing, and with the relay's combined signal (`AbortSignal.any`, since
   * replaced) the two were 0.05–0.3 ms of the gateway's CPU per job in the bench's profiles (issue 26).
   */
  private post(url: URL, body: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(abortErrorOf(signal));
        return;
      }
      const https = url.protocol === "https:";
      const request = (https ? httpsRequest : httpRequest)(
        url,
        {
          method: "POST",
          headers: { ...this.headers(), "content-length": Buffer.byteLength(body) },
          agent: https ? this.httpsAgent : this.httpAgent,
        },
        resolve,
      );
      const onAbort = () => request.destroy(abortErrorOf(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      // The request closes once its answer is read, dropped or failed: nothing is left to abort.
      request.once("close", () => signal.removeEventListener("abort", onAbort));
      request.once("error", reject);
      request.end(body);
    });
  }

  /** Stops a job and asks for a receipt of the first `deliveredTokens` tokens. */
  async cancel(endpoint: string, jobId: string, deliveredTokens: number, timeoutMs: number): Promise<CancelResponse> {
    const response = await fetch(new URL(`/v1/jobs/${encodeURIComponent(jobId)}/cancel`, endpoint), {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify({ delivered_tokens: deliveredTokens }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) throw new WorkerRequestError(`worker cancel answered ${response.status}`, response.status);
    return cancelResponseSchema.parse(await response.json());
  }
}

export class WorkerRequestError extends Error {
  override name = "WorkerRequestError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** How many unread lines pause the worker's answer until the relay catches up. */
const MAX_UNREAD_LINES = 64;

/**
 * The lines of a worker's NDJSON answer, split as its `data` events arrive. Read straight off the response rather
 * than through its async iterator and a line generator: those were two more promise chains per token, and the
 * Node stream machinery and garbage collection were the largest costs of a streamed job (issue 26).
 */
class NdjsonLines {
  private lines: string[] = [];
  private head = 0;
  private partial = "";
  private wake: (() => void) | undefined;
  ended = false;
  failure: Error | undefined;

  constructor(private readonly body: IncomingMessage) {
    body.setEncoding("utf8");
    body.on("data", this.onData);
    body.once("end", this.onEnd);
    // Kept after `stop`: an error of a body read off to its end must not go unhandled.
    body.on("error", this.onError);
    body.once("close", this.onClose);
  }

  /** The next complete line, if one has arrived. */
  shift(): string | undefined {
    if (this.head === this.lines.length) return undefined;
    const line = this.lines[this.head++];
    if (this.head === this.lines.length) {
      this.lines.length = 0;
      this.head = 0;
      if (this.body.isPaused() && !this.ended) this.body.resume();
    }
    return line;
  }

  /** Resolves when a line arrives, the answer ends or fails. */
  arrival(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** Nothing more is read into lines (what is left of the body is drained or dropped by the caller). */
  stop(): void {
    this.body.off("data", this.onData);
    this.body.off("end", this.onEnd);
    this.body.off("close", this.onClose);
    this.wake = undefined;
  }

  private readonly onData = (chunk: string) => {
    let start = 0;
    let newline = chunk.indexOf("\n");
    if (newline < 0) {
      this.partial += chunk;
      return;
    }
    while (newline >= 0) {
      let line = chunk.slice(start, newline);
      if (this.partial !== "") {
        line = this.partial + line;
        this.partial = "";
      }
      line = line.trim();
      if (line !== "") this.lines.push(line);
      start = newline + 1;
      newline = chunk.indexOf("\n", start);
    }
    this.partial = chunk.slice(start);
    if (this.lines.length - this.head >= MAX_UNREAD_LINES) this.body.pause();
    this.notify();
  };

  private readonly onEnd = () => {
    const last = this.partial.trim();
    this.partial = "";
    if (last !== "") this.lines.push(last);
    this.ended = true;
    this.notify();
  };

  private readonly onError = (error: Error) => {
    this.failure ??= error;
    this.notify();
  };

  private readonly onClose = () => {
    if (!this.ended) this.failure ??= new WorkerRequestError("the worker's answer ended before it was complete");
    this.notify();
  };

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** What `http.request`'s own `signal` option destroys the request with: an `AbortError` carrying the reason. */
function abortErrorOf(signal: AbortSignal): Error {
  const error = new Error("The operation was aborted", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}
