import { createClient, eq, type Client } from "@ponder/client";
import * as schema from "../indexer/ponder.schema.js";

/** Every read gives up after this long: a stalled indexer delays a measurement, never hangs the bench. */
const READ_TIMEOUT_MS = 2_000;

/**
 * What the bench reads from the index (the indexer's SQL over HTTP, read with @ponder/client): how far it has got
 * and a job's row. The bench's own reader, so it measures the index without depending on the gateway's internals.
 */
export class IndexProbe {
  private readonly client: Client<typeof schema>;

  constructor(indexerUrl: string) {
    this.client = createClient(`${indexerUrl.replace(/\/$/, "")}/sql`, { schema });
  }

  /** The last block the index has processed, or undefined before the first. */
  async indexedBlock(): Promise<{ number: number; timestamp: number } | undefined> {
    const status = await withTimeout(this.client.getStatus());
    const first = Object.values(status)[0];
    return first?.block ? { number: first.block.number, timestamp: first.block.timestamp } : undefined;
  }

  /** The index's row of a job (`settlementTx` is set once its settlement is indexed). */
  async jobById(jobId: string): Promise<typeof schema.job.$inferSelect | undefined> {
    const rows = await withTimeout(this.client.db.select().from(schema.job).where(eq(schema.job.id, jobId)).limit(1));
    return rows[0];
  }
}

async function withTimeout<T>(read: PromiseLike<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the index did not answer within ${READ_TIMEOUT_MS} ms`)),
      READ_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([Promise.resolve(read), late]);
  } finally {
    clearTimeout(timer);
  }
}
