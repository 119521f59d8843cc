import { keccak256, type Hex } from "viem";

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
/** A batch the node did not answer (timeout, reset connection) is sent again this many times. */
const MAX_RESENDS = 2;
/** What a node says when it already has a transaction we send again (it got the first copy after all). */
const ALREADY_HAVE = /nonce too low|already known|already imported|known transaction/i;

/**
 * Sends signed transactions to the node in the order they were signed (nonce order), as JSON-RPC batches with
 * one batch in flight at a time: what queues up while a batch is on its way leaves together in the next one. On
 * an automine chain each `eth_sendRawTransaction` mines a block before it answers; one round trip per
 * transaction was the gateway's throughput limit.
 */
export class RawTransactionPipe {
  private queue: Queued[] = [];
  private draining = false;

  constructor(
    private readonly rpcUrl: string,
    private readonly timeoutMs = 20_000,
  ) {}

  /** Resolves with the transaction hash the node answered, or rejects with its error. */
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

  /**
   * A node that stalled may have received a batch whose answer never came back (our timeout, or the connection
   * reset when it resumed): the same signed transactions are sent again, which cannot double-spend (same nonce,
   * same hash), and "already have it" answers to a resend resolve with the transaction's own hash.
   */
  private async post(batch: Queued[]): Promise<void> {
    try {
      let answers: unknown;
      let resent = false;
      for (let attempt = 0; ; attempt++) {
        try {
          const response = await fetch(this.rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(
              batch.map((item, id) => ({ jsonrpc: "2.0", id, method: "eth_sendRawTransaction", params: [item.raw] })),
            ),
            signal: AbortSignal.timeout(this.timeoutMs),
          });
          answers = await response.json();
          break;
        } catch (error) {
          if (attempt >= MAX_RESENDS || !isNoAnswer(error)) throw error;
          resent = true;
          await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
        }
      }
      if (!Array.isArray(answers)) throw new Error(`the node answered the batch with ${JSON.stringify(answers)}`);
      const byId = new Map<number, Answer>();
      for (const answer of answers as Answer[]) byId.set(answer.id, answer);
      batch.forEach((item, id) => {
        const answer = byId.get(id);
        if (answer?.result) item.resolve(answer.result);
        else if (resent && ALREADY_HAVE.test(answer?.error?.message ?? "")) item.resolve(keccak256(item.raw));
        else
          item.reject(
            new RawTransactionError(
              answer?.error?.message ?? "the node gave no answer for this transaction",
              revertDataOf(answer?.error?.data),
            ),
          );
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }
}

/** No answer at all from the node: our timeout, a refused or reset connection. */
function isNoAnswer(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "TimeoutError" || error.name === "AbortError") return true;
  return error instanceof TypeError || /ECONNRESET|ECONNREFUSED|socket hang up|fetch failed/i.test(error.message);
}
