import { cancelResponseSchema, healthSchema, workerEventSchema } from "./workerProtocol.js";
import type { CancelResponse, WorkerEvent, WorkerHealth, WorkerJobPayload } from "./workerProtocol.js";
import { ndjsonLines } from "./ndjsonLines.js";

/** HTTP client of the worker protocol (docs/DESIGN.md), authenticated with the shared gateway token. */
export class WorkerClient {
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

  /** Starts a job; yields the worker's events in order. Aborting `signal` drops the connection. */
  async *runJob(endpoint: string, payload: WorkerJobPayload, signal: AbortSignal): AsyncGenerator<WorkerEvent> {
    const response = await fetch(new URL("/v1/jobs", endpoint), {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(payload),
      signal,
    });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => "");
      throw new WorkerRequestError(`worker answered ${response.status}: ${text.slice(0, 200)}`, response.status);
    }
    // Node's fetch body is async-iterable; the DOM typings do not say so.
    for await (const line of ndjsonLines(response.body as unknown as AsyncIterable<Uint8Array>)) {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new WorkerRequestError(`worker sent a line that is not JSON: ${line.slice(0, 100)}`);
      }
      yield workerEventSchema.parse(json);
    }
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
