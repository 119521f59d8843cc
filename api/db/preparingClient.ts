import { createHash } from "node:crypto";
import pg from "pg";

/**
 * Distinct statement texts a process prepares; texts met after that run unprepared. The gateway's texts are fixed
 * or built from a few column sets (group commits, list filters): a few dozen. The bound keeps a text built from
 * data (none today) from growing every connection's statement cache without end.
 */
export const MAX_PREPARED_TEXTS = 500;

/** PostgreSQL's answer when a prepared statement's result columns changed under it (a migration added one). */
const CACHED_PLAN_CHANGED = "0A000";

type Callback = (error: Error | undefined, result?: pg.QueryResult) => void;
type QueryFn = (...args: unknown[]) => unknown;

/** Statement names by text, shared by every connection of the process (each prepares a name on first use). */
const names = new Map<string, string | null>();

function nameOf(text: string): string | undefined {
  const known = names.get(text);
  if (known !== undefined) return known ?? undefined;
  if (names.size >= MAX_PREPARED_TEXTS) return undefined;
  const name = `s_${createHash("sha1").update(text).digest("base64url").slice(0, 20)}`;
  names.set(text, name);
  return name;
}

/** Runs `text` unprepared from now on (its prepared form failed for good). */
function unprepare(text: string): void {
  names.set(text, null);
}

function isCachedPlanChange(error: unknown): boolean {
  return (error as { code?: string } | undefined)?.code === CACHED_PLAN_CHANGED;
}

/**
 * A node-postgres client that runs every parameterised query as a named prepared statement: PostgreSQL parses and
 * plans it once per connection instead of at every call. Planning was a fifth of the statement time the gateway's
 * statements cost per job (`pg_stat_statements` with `track_planning`, 100 clients: 1.33 of 6.1 ms per job; the
 * credit-slice and webhook-claim CTEs planned for 3–4 ms a call), all on the database's CPU (issue 26). A statement
 * whose result columns changed under it (another gateway ran a migration) is run again unprepared, and so is its text
 * from then on.
 */
export class PreparingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const plain = this.query.bind(this) as QueryFn;
    const prepared: QueryFn = (...args) => {
      const [text, values, callback] = args;
      if (typeof text !== "string" || !Array.isArray(values) || values.length === 0) return plain(...args);
      const name = nameOf(text);
      if (!name) return plain(...args);
      if (typeof callback === "function") {
        const done = callback as Callback;
        return plain({ name, text, values }, (error: Error | undefined, result?: pg.QueryResult) => {
          if (!isCachedPlanChange(error)) return done(error, result);
          unprepare(text);
          plain(text, values, done);
        });
      }
      if (args.length > 2) return plain(...args);
      return (plain({ name, text, values }) as Promise<pg.QueryResult>).catch((error: unknown) => {
        if (!isCachedPlanChange(error)) throw error;
        unprepare(text);
        return plain(text, values);
      });
    };
    this.query = prepared as typeof this.query;
  }
}
