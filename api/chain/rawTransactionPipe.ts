import type { Hex } from "viem";
import { keccak256Hex } from "./secp256k1.js";
import { postJson } from "../../shared/chain/jsonRpcHttp.js";

interface Queued {
  raw: Hex;
  resolve: (hash: Hex) => void;
  reject: (error: unknown) => void;
}

/** The node refused a transaction; `data` is the revert data when it reverted while being mined (automine). */
export class RawTransactionError extends Error {
  override name = "RawTransactionError";
  constructor(
    message: string,
    readonly data: Hex | undefined,
  ) {
    super(message);
  }
}

type Answer = { id: number; result?: Hex; error?: { message?: string; data?: unknown } };

function revertDataOf(data: unknown): Hex | undefined {
  if (typeof data === "string" && data.startsWith("0x")) return data as Hex;
  if (typeof data === "object" && data !== null && "data" in data) return revertDataOf(data.data);
  return undefined;
}

/** Most transactions in one JSON-RPC batch. */
const MAX_BATCH = 100;
/** A batch an endpoint did not answer (timeout, reset connection) is sent to it again this many times. */
const MAX_RESENDS = 2;
/**
 * What a node says when it already has the transaction we send (it got the first copy after all, or another
 * endpoint of the same chain passed it on): the transaction is out, and its hash is the hash of its bytes.
 */
export const ALREADY_HAVE = /already known|already imported|known transaction|already in (the )?(mempool|pool)/i;

/** One endpoint's answer for one transaction of a batch. */
type Outcome = { ok: true; hash: Hex } | { ok: false; error: unknown };

/**
 * Sends signed transactions to every RPC endpoint in the order they were signed (nonce order), as JSON-RPC batches
 * with one batch in flight at a time: what queues up while a batch is on its way leaves together in the next one. On
 * an automine chain each `eth_sendRawTransaction` mines a block before it answers; one round trip per transaction
 * was the gateway's throughput limit. Each batch goes to all endpoints at once, so an endpoint that is down or
 * stalled costs no transaction: the first endpoint that accepts a transaction decides it.
 */
export class RawTransactionPipe {
  private queue: Queued[] = [];
  private draining = false;

  constructor(
    private readonly rpcUrls: readonly string[],
    private readonly timeoutMs = 20_000,
  ) {
    if (rpcUrls.length === 0) throw new Error("the pipe needs at least one RPC URL");
  }

  /** Resolves with the transaction hash an endpoint answered, or rejects with the most telling error. */
  send(raw: Hex): Promise<Hex> {
    return new Promise<Hex>((resolve, reject) => {
      this.queue.push({ raw, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // Sends signed in the same tick leave in one batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.post(this.queue.splice(0, MAX_BATCH));
    } finally {
      this.draining = false;
    }
  }

  private async post(batch: Queued[]): Promise<void> {
    const perEndpoint = this.rpcUrls.map((url) =>
      this.postTo(url, batch).catch((error: unknown) => batch.map((): Outcome => ({ ok: false, error }))),
    );
    // Each transaction resolves as soon as one endpoint accepted it; it fails only once every endpoint refused.
    const settled = batch.map(() => ({ failures: [] as unknown[], done: false }));
    const allDecided = Promise.withResolvers<void>();
    const decide = () => {
      if (settled.every((state) => state.done)) allDecided.resolve();
    };
    // The next batch leaves once each transaction of this one is decided, not once the slowest endpoint answered:
    // a stalled endpoint must not hold the pipe (its late answers are ignored).
    void Promise.all(
      perEndpoint.map(async (outcomes) => {
        const answered = await outcomes;
        answered.forEach((outcome, index) => {
          const item = batch[index]!;
          const state = settled[index]!;
          if (state.done) return;
          if (outcome.ok) {
            state.done = true;
            item.resolve(outcome.hash);
            return;
          }
          state.failures.push(outcome.error);
          if (state.failures.length === this.rpcUrls.length) {
            state.done = true;
            item.reject(mostTelling(state.failures));
          }
        });
        decide();
      }),
    );
    await allDecided.promise;
  }

  /**
   * One endpoint. A node that stalled may have received a batch whose answer never came back (our timeout, or the
   * connection reset when it resumed): the same signed transactions are sent again, which cannot double-spend (same
   * nonce, same hash).
   */
  private async postTo(url: string, batch: Queued[]): Promise<Outcome[]> {
    let answers: unknown;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await postJson(
          url,
          JSON.stringify(
            batch.map((item, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [item.raw] })),
          ),
          this.timeoutMs,
        );
        answers = JSON.parse(answer.text);
        break;
      } catch (error) {
        if (attempt >= MAX_RESENDS || !isNoAnswer(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      }
    }
    if (!Array.isArray(answers)) throw new Error(`the node answered the batch with ${JSON.stringify(answers)}`);
    const byId = new Map<number, Answer>();
    for (const answer of answers as Answer[]) byId.set(answer.id, answer);
    return batch.map((item, id): Outcome => {
      const answer = byId.get(id);
      if (answer?.result) return { ok: true, hash: answer.result };
      const message = answer?.error?.message ?? "the node gave no answer for this transaction";
      if (ALREADY_HAVE.test(message)) return { ok: true, hash: keccak256Hex(item.raw) };
      return { ok: false, error: new RawTransactionError(message, revertDataOf(answer?.error?.data)) };
    });
  }
}

/** A revert (the transaction was mined) says most, then any node's refusal, then a transport failure. */
function mostTelling(failures: unknown[]): unknown {
  return (
    failures.find((error) => error instanceof RawTransactionError && error.data !== undefined && error.data !== "0x") ??
    failures.find((error) => error instanceof RawTransactionError) ??
    failures[0]
  );
}

/** No answer at all from the node: our timeout, a refused or reset connection. */
function isNoAnswer(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "TimeoutError" || error.name === "AbortError") return true;
  return /ECONNRESET|ECONNREFUSED|EPIPE|socket hang up/i.test(error.message);
}
