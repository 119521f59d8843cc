import { createClient, type Client } from "@ponder/client";
import * as schema from "../../indexer/ponder.schema.js";
import { withDeadline } from "../runtime/withDeadline.js";

/** The index's query builder (Drizzle over @ponder/client's SQL-over-HTTP). */
export type IndexDb = Client<typeof schema>["db"];

/** The index did not answer in time (or failed): callers fall back to what they last knew, or answer 503. */
export class IndexUnavailableError extends Error {
  override name = "IndexUnavailableError";
}

export interface IndexClientOptions {
  /** Every read gives up after this long. */
  timeoutMs: number;
  /** After a failed read, further reads fail at once for this long, except one probe per period. */
  retryMs: number;
}

/**
 * The gateway's one client of the indexer (@ponder/client, SQL over HTTP at `${indexerUrl}/sql`): it owns the
 * connection, the deadline of every read and whether the index counts as away (and since when). Built once in
 * `api/main.ts`; the read model (`IndexReader`), the web app's views and the webhook dispatcher query through it.
 *
 * @ponder/client 0.16 takes no abort signal, so a timed-out request is abandoned rather than aborted; after a
 * failure `read` fails fast for `retryMs` (one probe per period goes through), which bounds how many such
 * requests can pile up while the indexer is away.
 */
export class IndexClient {
  private readonly client: Client<typeof schema>;
  private downSince: number | undefined;
  private lastProbeAt = 0;

  constructor(
    indexerUrl: string,
    readonly options: IndexClientOptions = { timeoutMs: 2_000, retryMs: 1_000 },
  ) {
    this.client = createClient(`${indexerUrl.replace(/\/$/, "")}/sql`, { schema });
  }

  /** Since when reads fail (ms since epoch), or undefined while the index answers. */
  get unavailableSince(): number | undefined {
    return this.downSince;
  }

  /**
   * The query builder without a deadline, for readers that poll on their own schedule and retry on failure (the
   * webhook dispatcher, the web app's activity report); their failures do not mark the index away.
   */
  get db(): IndexDb {
    return this.client.db;
  }

  /**
   * A read of the request path: gives up after `timeoutMs`, fails fast while the index is away, and marks it
   * away or back. Every failure is an IndexUnavailableError.
   */
  async read<T>(what: string, query: (db: IndexDb) => PromiseLike<T>): Promise<T> {
    return this.tracked(what, () => query(this.client.db));
  }

  /** The indexer's status (the latest indexed block per chain), read like `read`. */
  async status(): Promise<Awaited<ReturnType<Client<typeof schema>["getStatus"]>>> {
    return this.tracked("status", () => this.client.getStatus());
  }

  /**
   * A read bounded by the deadline only (DeadlineExceededError after `timeoutMs`), not counted in the index's
   * availability: the web app's job history.
   */
  async bounded<T>(what: string, query: (db: IndexDb) => PromiseLike<T>): Promise<T> {
    return withDeadline(query(this.client.db), this.options.timeoutMs, what);
  }

  private async tracked<T>(what: string, query: () => PromiseLike<T>): Promise<T> {
    const now = Date.now();
    if (this.downSince !== undefined && now - this.lastProbeAt < this.options.retryMs) {
      throw new IndexUnavailableError(`index unavailable since ${new Date(this.downSince).toISOString()} (${what})`);
    }
    this.lastProbeAt = now;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new IndexUnavailableError(`index did not answer ${what} within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
    });
    try {
      const result = await Promise.race([Promise.resolve(query()), late]);
      this.downSince = undefined;
      return result;
    } catch (error) {
      this.downSince ??= now;
      if (error instanceof IndexUnavailableError) throw error;
      throw new IndexUnavailableError(`index read failed (${what}): ${(error as Error).message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
