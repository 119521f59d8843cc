import http from "node:http";
import type { Hex } from "viem";
import { jobIdToBytes32, newJobId } from "@credit-metered/client";
import type { TokenDelivery } from "../shared/workerProtocol/index.js";

/**
 * One keep-alive agent for every bench request (no socket churn in the figures). Node's agent follows the server's
 * `Keep-Alive: timeout=N` hint (closing an idle socket a second before it) only when it has a timeout of its own;
 * without one it kept idle sockets until the gateway closed them, and a request sent on one as it closed failed
 * with ECONNRESET (3 of 900 open-loop requests in the bench of 98aa66f, after the 200-stream level left sockets idle).
 * An idle timeout far above any bench answer's gaps, so only the hint applies.
 */
const IDLE_SOCKET_TIMEOUT_MS = 60_000;
const agent = new http.Agent({
  keepAlive: true,
  maxSockets: Infinity,
  maxFreeSockets: 1024,
  timeout: IDLE_SOCKET_TIMEOUT_MS,
});

export type Timed = {
  status: number;
  /** Request sent → first token received (ms). */
  ttftMs: number | undefined;
  /** Request sent → response ended (ms). */
  totalMs: number;
  headers: http.IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  body: string;
};

/**
 * What a failed bench request got, to name its errors in the results: the status and the error code of the body (a
 * spec error) or of the stream's error event (a job that failed after its stream started), else the status alone;
 * a request rejected before any answer (a timeout, a reset) is the rejection's message.
 */
export function errorKind(result: Timed | Error): string {
  if (result instanceof Error) return result.message.slice(0, 80);
  const code = /"code"\s*:\s*"([a-z_]+)"/.exec(result.body)?.[1];
  return code ? `${result.status} ${code}` : String(result.status);
}

/** Counts per error kind, most frequent first, as `{ "503 service_unavailable": 3 }`. */
export function countKinds(kinds: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
}

/**
 * `since`: the moment timings count from (default: when the request is sent; an open-loop run passes the request's
 * scheduled arrival, so time spent queued in the client counts too). `timeoutMs`: give up and reject when nothing arrives for this long.
 */
export type TimedOptions = { since?: number; timeoutMs?: number };

/** Default idle limit of one bench request: a stalled answer fails the request, never hangs the bench. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * Sends one request and times the first chunk that carries a token (`isToken` looks at the text received so
 * far) and the end of the response.
 */
function timedRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  isToken: (received: string) => boolean,
  options: TimedOptions = {},
): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = options.since ?? performance.now();
    const request = http.request(url, { method: "POST", agent, headers }, (response) => {
      let received = "";
      let ttftMs: number | undefined;
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        received += chunk;
        if (ttftMs === undefined && isToken(received)) ttftMs = performance.now() - started;
      });
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          ttftMs,
          totalMs: performance.now() - started,
          headers: response.headers,
          trailers: response.trailers,
          body: received,
        }),
      );
      response.on("error", reject);
    });
    request.setTimeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS, () =>
      request.destroy(new Error(`${url}: nothing received for ${options.timeoutMs ?? REQUEST_TIMEOUT_MS} ms`)),
    );
    request.on("error", reject);
    request.end(body);
  });
}

const MESSAGES = [{ role: "user", content: "Benchmark: say something short." }];

/** A streaming chat completion through the gateway; the first `data:` event carries the first token. */
export function gatewayStream(
  apiUrl: string,
  apiKey: string,
  model: string,
  maxTokens: number,
  options: TimedOptions = {},
): Promise<Timed> {
  return timedRequest(
    `${apiUrl}/v1/chat/completions`,
    { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    JSON.stringify({ model, messages: MESSAGES, max_tokens: maxTokens, stream: true }),
    (received) => received.includes("data: {"),
    options,
  );
}

/** A whole (non-streaming) completion through the gateway: answers once the settlement is sent. */
export function gatewayComplete(apiUrl: string, apiKey: string, model: string, maxTokens: number): Promise<Timed> {
  return timedRequest(
    `${apiUrl}/v1/chat/completions`,
    { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    JSON.stringify({ model, messages: MESSAGES, max_tokens: maxTokens }),
    () => true,
  );
}

/**
 * The same job straight to a worker (the gateway↔worker protocol, docs/DESIGN.md): NDJSON, ack then tokens.
 * `delivery: "whole"` asks for what the gateway asks for when its client takes a whole (non-streaming) completion.
 */
export function workerStream(
  endpoint: string,
  token: string,
  escrow: { chain_id: number; address: Hex },
  model: string,
  maxTokens: number,
  options: TimedOptions & { delivery?: TokenDelivery } = {},
): Promise<Timed> {
  const jobId = newJobId();
  return timedRequest(
    `${endpoint}/v1/jobs`,
    { authorization: `Bearer ${token}`, "content-type": "application/json" },
    JSON.stringify({
      job_id: jobId,
      job_id_bytes32: jobIdToBytes32(jobId),
      model,
      messages: MESSAGES,
      max_tokens: maxTokens,
      escrow,
      ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
    }),
    (received) => received.includes('"type":"token"'),
    options,
  );
}

export async function getJson<T>(url: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return (await response.json()) as T;
}
