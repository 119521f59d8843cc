import http from "node:http";
import OpenAI from "openai";
import type { ErrorBody, JobResource } from "@credit-metered/client/http";
import { expect } from "vitest";
import { stackInfo } from "./stackInfo.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

/** The official OpenAI SDK pointed at the gateway, as a client would use it (no retries: tests see each answer). */
export function openaiFor(apiKey: string, options: { baseUrl?: string } = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${options.baseUrl ?? stackInfo().apiUrl}/v1`, maxRetries: 0, timeout: 60_000 });
}

export type RawResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** HTTP trailers (sent after a chunked body), lower-cased names. */
  trailers: NodeJS.Dict<string>;
  body: string;
  json: <T = unknown>() => T;
};

/** One HTTP request with `node:http`, reading the whole body and the trailers `fetch` does not expose. */
export function rawRequest(
  method: string,
  path: string,
  {
    apiKey,
    body,
    headers = {},
    baseUrl,
  }: { apiKey?: string; body?: unknown; headers?: Record<string, string>; baseUrl?: string } = {},
): Promise<RawResponse> {
  const url = new URL(path, baseUrl ?? stackInfo().apiUrl);
  const payload =
    body === undefined ? undefined : typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const requestHeaders: Record<string, string> = { ...headers };
  if (apiKey !== undefined) requestHeaders.authorization = `Bearer ${apiKey}`;
  if (payload !== undefined) requestHeaders["content-type"] ??= "application/json";
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: requestHeaders }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          trailers: response.trailers,
          body: text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
      response.on("error", reject);
    });
    request.on("error", (error: NodeJS.ErrnoException) => {
      // Node's keep-alive race (its http docs, "reusedSocket"): a request written on a pooled socket just as the
      // gateway closed it for idleness (5 s keep-alive) is reset unanswered, never processed; send it once more on
      // a fresh connection, as HTTP clients do for a request that never reached the server.
      if (request.reusedSocket && error.code === "ECONNRESET") {
        rawRequest(method, path, { apiKey, body, headers, baseUrl }).then(resolve, reject);
        return;
      }
      reject(error);
    });
    if (payload !== undefined) request.write(payload);
    request.end();
  });
}

export type { ErrorBody };

/** Asserts the spec's error body: status, code, every field present, `docs` linking `{docs_url}/errors#<code>`. */
export function expectErrorBody(
  response: RawResponse,
  status: number,
  code: string,
  options: { type?: string; param?: string | null } = {},
): ErrorBody["error"] {
  expect(response.status, response.body).toBe(status);
  const { error } = response.json<ErrorBody>();
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  expect(typeof error.type).toBe("string");
  if (options.type !== undefined) expect(error.type).toBe(options.type);
  // `param` is always present (string or null); checked exactly when the test names it.
  expect(error).toHaveProperty("param");
  if ("param" in options) expect(error.param).toBe(options.param);
  else expect(error.param === null || typeof error.param === "string").toBe(true);
  expect(error.docs).toMatch(new RegExp(`/errors#${code}$`));
  return error;
}

export type SseEvent = { data: string };

/** Splits an SSE body into its `data:` payloads, in order (the final `[DONE]` included). */
export function sseData(body: string): string[] {
  return body
    .split("\n\n")
    .map((block) => block.trim())
    .filter((block) => block.length > 0)
    .map((block) => {
      const lines = block.split("\n").filter((line) => line.startsWith("data:"));
      return lines.map((line) => line.slice(5).trimStart()).join("\n");
    });
}

/** The Job resource as the contract declares it (packages/client/src/http/jobs.ts). */
export type Job = JobResource;

/** Fetches a job of `apiKey`. */
export async function getJob(apiKey: string, jobId: string): Promise<RawResponse> {
  return rawRequest("GET", `/v1/jobs/${jobId}`, { apiKey });
}

/** Waits until the job reaches `status` (the index caught up with the settlement) and returns it. */
export async function waitForJobStatus(
  apiKey: string,
  jobId: string,
  status: string,
  timeoutMs = 30_000,
): Promise<Job> {
  let job: Job | undefined;
  await waitFor(
    `${jobId} ${status}`,
    async () => {
      const response = await getJob(apiKey, jobId);
      if (response.status !== 200) return false;
      job = response.json<Job>();
      return job.status === status;
    },
    { timeoutMs, intervalMs: 150 },
  );
  return job!;
}

/** A minimal chat completion body. */
export function chatBody(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, messages: [{ role: "user", content: "Say hello" }], ...extra };
}
