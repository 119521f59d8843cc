import { STATUS_CODES } from "node:http";
import { custom, HttpRequestError, RpcRequestError, type Transport } from "viem";
import { postJson, type HttpAnswer } from "../../shared/chain/jsonRpcHttp.js";

export type ChainTransportOptions = {
  /** The chain's JSON-RPC endpoints, best first: one that does not answer hands the request to the next. */
  urls: readonly string[];
  /** One HTTP attempt gives up after this long (the node is then treated as stalled, not as rate limiting). */
  attemptTimeoutMs: number;
  /** With several URLs: an endpoint that has not answered within this long gets the next one asked alongside. */
  hedgeAfterMs: number;
  /** A head poll (`eth_getBlockByNumber("latest")`) waits at most this long before answering the last head. */
  headTimeoutMs: number;
  /** A request is retried inside the transport for this long while the node does not answer at all. */
  stallBudgetMs: number;
  /** Outage start and end, for the log. */
  onStateChange?: (event: { state: "stalled" | "recovered"; method: string; stalledMs: number }) => void;
};

type JsonRpcBody = { jsonrpc: "2.0"; id: number; method: string; params: unknown };

/** No HTTP answer at all (timeout, refused or reset connection): retrying may succeed; the node said nothing. */
class NodeSilentError extends Error {
  override name = "NodeSilentError";
}

/** How nodes say that a block named by hash is unknown to them: Hardhat (EDR), geth, anvil, reth, Erigon. */
const BLOCK_GONE = /block ?hash cannot be found|unknown block|block not found|header not found|not found.*block/i;

/** Methods whose request names one block by its hash (a block a reorg can remove). */
const BY_HASH_METHODS = new Set(["eth_getBlockByHash", "eth_getBlockReceipts", "debug_traceBlockByHash"]);

/** Whether the request names a block by its hash: `eth_getLogs({ blockHash })` and the by-hash block reads. */
function namesBlockByHash(body: JsonRpcBody): boolean {
  if (BY_HASH_METHODS.has(body.method)) return true;
  const [filter] = Array.isArray(body.params) ? (body.params as unknown[]) : [];
  return typeof filter === "object" && filter !== null && "blockHash" in filter;
}

/**
 * The indexer's JSON-RPC transport. Why it exists: Ponder 0.16.10 treats every request timeout as a sign of rate
 * limiting. A chain node that stops answering for 15 s (SIGSTOP, GC pause, restart) makes each of the hundreds of
 * head polls queued meanwhile (one per `pollingInterval`) time out; each lowers the client-side limit by 5% (20 →
 * 7.8 requests/s), and the limit never climbs back: raising it needs every second at ≥ 90% of a fractional limit
 * that the per-second counter can never reach (7 < 0.9 × 7.8). From then on the polls alone (10/s) exceed the
 * limit, Ponder's request queue grows forever and live indexing never gets a request through ("Unable to find
 * available JSON-RPC provider within expected time … rate_limit=[7.8]") until the process restarts.
 *
 * So this transport never hands Ponder a `TimeoutError`:
 * - a head poll that the node does not answer within `headTimeoutMs` gets the last head the node returned (Ponder
 *   sees a block it already has and does nothing), so polls never pile up behind a silent node;
 * - any other request is retried here, attempt after attempt of `attemptTimeoutMs`, until the node answers
 *   (within `stallBudgetMs`), so it completes within one attempt of the node coming back;
 * - real answers pass through unchanged: JSON-RPC errors as `RpcRequestError`, HTTP errors (429 included, which
 *   is a real rate limit) as `HttpRequestError` with their status;
 * - except one: a request for a block (by hash) that a reorg removed is answered "not found" (404), which Ponder does
 *   not retry, instead of the node's JSON-RPC error, which it retries for about a minute while live indexing waits.
 */
export function chainTransport(options: ChainTransportOptions): Transport {
  let nextId = 1;
  let lastHead: { params: string; block: unknown } | undefined;
  let headInFlight: { params: string; answer: Promise<unknown> } | undefined;
  let stalledSince: number | undefined;

  const noteSilent = (method: string) => {
    if (stalledSince !== undefined) return;
    stalledSince = Date.now();
    options.onStateChange?.({ state: "stalled", method, stalledMs: 0 });
  };
  const noteAnswer = (method: string) => {
    if (stalledSince === undefined) return;
    const stalledMs = Date.now() - stalledSince;
    stalledSince = undefined;
    options.onStateChange?.({ state: "recovered", method, stalledMs });
  };

  // The endpoint that answered last is asked first. One that fails without an HTTP answer hands the request to the
  // next at once; one that is merely slow gets company after `hedgeAfterMs` (the next endpoint is asked alongside
  // and the first HTTP answer wins), so a hung endpoint costs a request `hedgeAfterMs`, not `attemptTimeoutMs`.
  let preferred = 0;

  /** Endpoints asked in turn (hedged) until one answers over HTTP; NodeSilentError when none did. */
  const attempt = (body: JsonRpcBody): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const count = options.urls.length;
      const first = preferred;
      let launched = 0;
      let pending = 0;
      let settled = false;
      let silence: unknown;
      const timers: NodeJS.Timeout[] = [];
      const settle = (index: number, outcome: () => void) => {
        if (settled) return;
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        if (index >= 0) preferred = index;
        outcome();
      };
      const launch = () => {
        if (settled || launched >= count) return;
        const index = (first + launched++) % count;
        pending++;
        if (launched < count) timers.push(setTimeout(launch, options.hedgeAfterMs));
        attemptAt(options.urls[index]!, body).then(
          (result) => settle(index, () => resolve(result)),
          (error: unknown) => {
            pending--;
            if (!(error instanceof NodeSilentError)) return settle(index, () => reject(error));
            silence = error;
            if (launched < count) return launch();
            if (pending === 0)
              settle(-1, () => {
                noteSilent(body.method);
                reject(silence);
              });
          },
        );
      };
      launch();
    });

  const attemptAt = async (url: string, body: JsonRpcBody): Promise<unknown> => {
    let response: HttpAnswer;
    try {
      response = await postJson(url, JSON.stringify(body), options.attemptTimeoutMs);
    } catch (error) {
      throw new NodeSilentError(`${body.method}: ${(error as Error).message}`, { cause: error });
    }
    const { text } = response;
    noteAnswer(body.method);
    let data: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      data = JSON.parse(text || "{}") as typeof data;
    } catch {
      throw new HttpRequestError({ body, url, status: response.status, details: text.slice(0, 200) });
    }
    if (response.status < 200 || response.status > 299) {
      throw new HttpRequestError({
        body,
        url,
        status: response.status,
        details: JSON.stringify(data.error ?? STATUS_CODES[response.status] ?? ""),
      });
    }
    if (data.error) {
      if (namesBlockByHash(body) && BLOCK_GONE.test(data.error.message)) {
        // A reorg removed the block this request names (Ponder asked for it while the node switched branches). No
        // retry can find it, yet Ponder retries a JSON-RPC error nine times over ~64 s, and live indexing waits
        // meanwhile (a CI run of the chain-fault suite saw the index stand still for minutes after a reorg). As
        // "not found" (404) Ponder gives the block up at once, and its next head poll reconciles the reorg.
        throw new HttpRequestError({
          body,
          url,
          status: 404,
          details: `the block this request names is not on the node's chain (${data.error.message})`,
        });
      }
      throw new RpcRequestError({ body, error: data.error, url });
    }
    return data.result;
  };

  /** Retries while the node is silent, up to the stall budget; other failures go to Ponder at once. */
  const untilAnswered = async (body: JsonRpcBody): Promise<unknown> => {
    const giveUpAt = Date.now() + options.stallBudgetMs;
    for (let retry = 0; ; retry++) {
      try {
        return await attempt(body);
      } catch (error) {
        if (!(error instanceof NodeSilentError)) throw error;
        if (Date.now() >= giveUpAt) {
          // Not a TimeoutError on purpose (see above): Ponder retries it with its own backoff.
          throw new HttpRequestError({ body, url: options.urls.join(","), details: error.message, cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** retry)));
      }
    }
  };

  const headPoll = async (body: JsonRpcBody): Promise<unknown> => {
    const params = JSON.stringify(body.params);
    if (!headInFlight || headInFlight.params !== params) {
      const answer = attempt(body).then((block) => {
        if (block) lastHead = { params, block };
        return block;
      });
      const entry = { params, answer };
      headInFlight = entry;
      answer
        .finally(() => {
          if (headInFlight === entry) headInFlight = undefined;
        })
        .catch(() => undefined);
    }
    const answer = headInFlight.answer;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), options.headTimeoutMs);
    });
    try {
      const result = await Promise.race([answer, late]);
      if (result !== "late") return result;
      throw new NodeSilentError(`${body.method}: no answer within ${options.headTimeoutMs} ms`);
    } catch (error) {
      if (!(error instanceof NodeSilentError)) throw error;
      // The node is silent: the last head it gave is still the newest block we know of.
      if (lastHead && lastHead.params === params) return lastHead.block;
      throw new HttpRequestError({ body, url: options.urls.join(","), details: error.message, cause: error });
    } finally {
      clearTimeout(timer);
    }
  };

  return custom(
    {
      async request({ method, params }: { method: string; params?: unknown }) {
        const body: JsonRpcBody = { jsonrpc: "2.0", id: nextId++, method, params: params ?? [] };
        const isHeadPoll =
          method === "eth_getBlockByNumber" && Array.isArray(params) && (params as unknown[])[0] === "latest";
        return isHeadPoll ? headPoll(body) : untilAnswered(body);
      },
    },
    { retryCount: 0 },
  );
}
