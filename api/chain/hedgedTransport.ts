import { custom, HttpRequestError, RpcRequestError, type Transport } from "viem";

export interface HedgedTransportOptions {
  /** The chain's JSON-RPC endpoints, best first. */
  urls: readonly string[];
  /** One attempt at one endpoint gives up after this long. */
  timeoutMs: number;
  /** An endpoint that has not answered within this long gets a second endpoint asked alongside it. */
  hedgeAfterMs: number;
}

type JsonRpcBody = { jsonrpc: "2.0"; id: number; method: string; params: unknown };

/** No usable HTTP answer (timeout, refused or reset connection, a 5xx): the next endpoint may have one. */
class EndpointFailure extends Error {
  override name = "EndpointFailure";
}

/**
 * Reads through several RPC endpoints so that losing one costs no request, not even its timeout: each request goes
 * to the endpoint that answered last; if it has not answered within `hedgeAfterMs` (or failed), the next endpoint is
 * asked too, and so on; the first answer wins (a JSON-RPC error is an answer: a revert is the same everywhere).
 * viem's ranked `fallback` only moves on once an attempt has failed (a stalled endpoint costs every request its
 * full timeout until the next ranking), which stopped the gateway's 1 s chain-liveness probe for the whole outage.
 */
export function hedgedTransport(options: HedgedTransportOptions): Transport {
  let nextId = 1;
  let preferred = 0;

  const attempt = async (url: string, body: JsonRpcBody, signal: AbortSignal): Promise<unknown> => {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]),
      });
      text = await response.text();
    } catch (error) {
      throw new EndpointFailure(`${url}: ${(error as Error).message}`, { cause: error });
    }
    let data: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      data = JSON.parse(text || "{}") as typeof data;
    } catch {
      throw new EndpointFailure(`${url}: HTTP ${response.status} ${text.slice(0, 200)}`);
    }
    if (data.error) throw new RpcRequestError({ body, error: data.error, url });
    if (!response.ok) throw new EndpointFailure(`${url}: HTTP ${response.status}`);
    return data.result;
  };

  const request = (body: JsonRpcBody): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const order = options.urls.map((_, offset) => (preferred + offset) % options.urls.length);
      const cancel = new AbortController();
      const failures: unknown[] = [];
      let started = 0;
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        settled = true;
        clearTimeout(timer);
        cancel.abort();
      };
      const startNext = () => {
        if (settled || started >= order.length) return;
        const index = order[started++]!;
        clearTimeout(timer);
        timer = setTimeout(startNext, options.hedgeAfterMs);
        attempt(options.urls[index]!, body, cancel.signal).then(
          (result) => {
            if (settled) return;
            preferred = index;
            finish();
            resolve(result);
          },
          (error: unknown) => {
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
              reject(new HttpRequestError({ body, url: options.urls.join(","), details: String(error.message) }));
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
    { retryCount: 1, retryDelay: 100 },
  );
}
