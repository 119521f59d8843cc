import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { cancelResponseSchema, healthSchema, workerEventSchema } from "./workerProtocol.js";
import type { CancelResponse, WorkerEvent, WorkerHealth, WorkerJobPayload } from "./workerProtocol.js";
import { ndjsonLines } from "./ndjsonLines.js";

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
    try {
      for await (const line of ndjsonLines(
        response.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
      )) {
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
        const event = workerEventSchema.parse(json);
        if (event.type === "done" || event.type === "error") over = true;
        yield event;
      }
    } finally {
      if (!response.readableEnded) {
        if (over) response.resume();
        else response.destroy();
      }
    }
  }

  /** POSTs `body` and resolves with the answer's head; its body streams (destroyed when `signal` aborts). */
  private post(url: URL, body: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const https = url.protocol === "https:";
      const request = (https ? httpsRequest : httpRequest)(
        url,
        {
          method: "POST",
          headers: { ...this.headers(), "content-length": Buffer.byteLength(body) },
          agent: https ? this.httpsAgent : this.httpAgent,
          signal,
        },
        resolve,
      );
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
