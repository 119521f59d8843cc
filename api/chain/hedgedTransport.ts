import { custom, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from "viem";
import { postJson, RpcTimeoutError, type HttpAnswer } from "../../shared/chain/jsonRpcHttp.js";

export interface HedgedTransportOptions {
  /** The chain's JSON-RPC endpoints, best first. */
  urls: readonly string[];
  /** One attempt at one endpoint gives up after this long. */
  timeoutMs: number;
  /** An endpoint that has not answered within this long gets a second endpoint asked alongside it. */
  hedgeAfterMs: number;
  /** viem retries a request that failed at every endpoint this many times (100 ms apart). */
  retryCount?: number;
}

type JsonRpcBody = { jsonrpc: "2.0"; id: number; method: string; params: unknown };

/** Why the attempts still on their way are stopped once one endpoint has answered (made once: see `finish`). */
const ANSWERED_ELSEWHERE = new Error("another endpoint answered first");

/** No usable HTTP answer (timeout, refused or reset connection, a 5xx): the next endpoint may have one. */
class EndpointFailure extends Error {
  override name = "EndpointFailure";
  constructor(
    message: string,
    /** The HTTP status when there was an answer. */
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Reads through several RPC endpoints so that losing one costs no request, not even its timeout: each request goes
 * to the endpoint that answered last; if it has not answered within `hedgeAfterMs` (or failed), the next endpoint is
 * asked too, and so on; the first answer wins (a JSON-RPC error is an answer: a revert is the same everywhere).
 * viem's ranked `fallback` only moves on once an attempt has failed (a stalled endpoint costs every request its
 * full timeout until the next ranking), which stopped the gateway's 1 s chain-liveness probe for the whole outage.
 * With one endpoint it is a plain JSON-RPC transport over `node:http` (api/chain/jsonRpcHttp.ts).
 */
export function hedgedTransport(options: HedgedTransportOptions): Transport {
  let nextId = 1;
  let preferred = 0;

  const attempt = async (url: string, body: JsonRpcBody, signal: AbortSignal): Promise<unknown> => {
    let answer: HttpAnswer;
    try {
      answer = await postJson(url, JSON.stringify(body), options.timeoutMs, signal);
    } catch (error) {
      throw new EndpointFailure(`${url}: ${(error as Error).message}`, undefined, { cause: error });
    }
    let data: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      data = JSON.parse(answer.text || "{}") as typeof data;
    } catch {
      throw new EndpointFailure(`${url}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`, answer.status);
    }
    if (data.error) throw new RpcRequestError({ body, error: data.error, url });
    if (answer.status < 200 || answer.status > 299)
      throw new EndpointFailure(`${url}: HTTP ${answer.status}`, answer.status);
    return data.result;
  };

  const request = (body: JsonRpcBody): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const order = options.urls.map((_, offset) => (preferred + offset) % options.urls.length);
      const cancel = new AbortController();
      const failures: unknown[] = [];
      let started = 0;
      let ended = 0;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
        // Only attempts still on their way need stopping: almost every call has one attempt, which has ended, and
        // abort() without a reason builds a DOMException with its stack (0.2 ms of gateway CPU per job at 50/s).
        if (ended < started) cancel.abort(ANSWERED_ELSEWHERE);
      };
      const startNext = () => {
        if (settled || started >= order.length) return;
        const index = order[started++]!;
        clearTimeout(timer);
        if (started < order.length) timer = setTimeout(startNext, options.hedgeAfterMs);
        attempt(options.urls[index]!, body, cancel.signal).then(
          (result) => {
            ended++;
            if (settled) return;
            preferred = index;
            finish();
            resolve(result);
          },
          (error: unknown) => {
            ended++;
            if (settled) return;
            if (!(error instanceof EndpointFailure)) {
              preferred = index;
              finish();
              reject(error);
              return;
            }
            failures.push(error);
            if (failures.length === order.length) {
              finish();
              reject(noAnswer(body, options.urls, failures as EndpointFailure[]));
              return;
            }
            startNext();
          },
        );
      };
      startNext();
    });

  return custom(
    {
      async request({ method, params }: { method: string; params?: unknown }) {
        return request({ jsonrpc: "2.0", id: nextId++, method, params: params ?? [] });
      },
    },
    { retryCount: options.retryCount ?? 1, retryDelay: 100 },
  );
}

/**
 * What viem's own http transport would have thrown: a TimeoutError when no endpoint answered in time, else an
 * HttpRequestError (with the status of the last HTTP answer, if any), which api/errors/dependencyOutage.ts reads.
 */
function noAnswer(body: JsonRpcBody, urls: readonly string[], failures: EndpointFailure[]): Error {
  const url = urls.join(",");
  if (failures.every((failure) => failure.cause instanceof RpcTimeoutError)) return new TimeoutError({ body, url });
  const last = failures.at(-1)!;
  return new HttpRequestError({
    body,
    url,
    details: last.message,
    ...(last.status === undefined ? {} : { status: last.status }),
    cause: last,
  });
}
