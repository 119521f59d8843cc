import pg from "pg";

/**
 * PostgreSQL's idle backends publish their counters at most every 10 s (PGSTAT_IDLE_INTERVAL; busy ones every 1 s):
 * a reading taken this long after a window's load has every commit of that window in it.
 */
export const STATS_FLUSH_MS = 11_000;

/**
 * Commits of the stack's database (`pg_stat_database.xact_commit`: every process of the stack — each gateway, the
 * indexer — commits there). One connection of its own; each reading is itself one commit, which `commitsSince`
 * takes off, so the figure holds only what the stack committed.
 */
export class CommitCounter {
  private readonly client: pg.Client;
  private readings = 0;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async open(databaseUrl: string): Promise<CommitCounter> {
    const client = new pg.Client({ connectionString: databaseUrl, statement_timeout: 5_000, query_timeout: 5_000 });
    await client.connect();
    return new CommitCounter(client);
  }

  /** A reading: the database's commits so far and this counter's own readings so far (this one included). */
  async read(): Promise<{ commits: number; readings: number }> {
    const { rows } = await this.client.query<{ commits: string }>(
      "SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()",
    );
    this.readings++;
    return { commits: Number(rows[0]?.commits ?? 0), readings: this.readings };
  }

  /** The stack's commits between two readings (this counter's own readings between them taken off). */
  static between(before: { commits: number; readings: number }, after: { commits: number; readings: number }) {
    return after.commits - before.commits - (after.readings - before.readings);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
