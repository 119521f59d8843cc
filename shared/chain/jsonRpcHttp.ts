import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * Connections to the chain's nodes, kept open between calls. The gateway's and the indexer's chain calls go through
 * `node:http` rather than `fetch`: undici's fetch (a Request, a Response and WHATWG streams per call) was 17% of the
 * gateway's main thread in the bench's profile for calls whose bodies are a few hundred bytes (issue 26), and in an
 * idle indexer's profile its head polls' fetch and the garbage it left were most of the process's CPU. One pool per
 * process, as fetch's global dispatcher was.
 */
const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/** An HTTP answer: its status and its body. */
export interface HttpAnswer {
  status: number;
  text: string;
}

/** No answer within `timeoutMs` (named as `AbortSignal.timeout`'s error is, which callers already recognise). */
export class RpcTimeoutError extends Error {
  override name = "TimeoutError";
}

/**
 * POSTs a JSON body and reads the whole answer. Rejects on a refused or reset connection, on `signal`, and after
 * `timeoutMs` (the connection is then dropped, as fetch dropped it).
 */
export function postJson(url: string, body: string, timeoutMs: number, signal?: AbortSignal): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const https = url.startsWith("https:");
    let done = false;
    const finish = (error: Error | undefined, answer?: HttpAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (error) {
        request.destroy();
        reject(error);
      } else resolve(answer!);
    };
    const onAbort = () => finish((signal!.reason as Error | undefined) ?? new Error("aborted"));
    const request = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        agent: https ? httpsAgent : httpAgent,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.once("end", () =>
          finish(undefined, {
            status: response.statusCode ?? 0,
            text: chunks.length === 1 ? chunks[0]!.toString() : Buffer.concat(chunks).toString(),
          }),
        );
        response.once("error", (error) => finish(error));
        // A connection reset mid-answer: `end` never comes.
        response.once("close", () => finish(new Error("socket hang up")));
      },
    );
    const timer = setTimeout(
      () => finish(new RpcTimeoutError(`no answer from ${url} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    request.once("error", (error) => finish(error));
    request.end(body);
  });
}
