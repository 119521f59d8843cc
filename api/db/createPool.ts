import pg from "pg";
import { PreparingClient } from "./preparingClient.js";

/** A query (or the wait for a free connection) that takes longer fails instead of hanging a request. */
const QUERY_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long a connection may sit idle before the pool closes it (node-postgres's default is 10 s). Each new
 * connection costs its SCRAM-SHA-256 login (4,096 PBKDF2 rounds and webcrypto HMACs in this process) and a
 * backend start: with 10 s, every lull of traffic longer than that (each bench level begins after one) emptied
 * the pool and the next burst paid up to `max` logins, ~2% of the gateway's profiled CPU in the first seconds
 * of a load (issue 26). A minute keeps them across such lulls; a gateway left idle still gives them back.
 */
export const IDLE_TIMEOUT_MS = 60_000;

/**
 * One pool per process; every query of the gateway's own tables goes through it. Connections start with
 * `search_path` set to the gateway's schema, so queries name tables without it. A stopped or frozen server costs
 * a query at most QUERY_TIMEOUT_MS (the error handler answers 503 `service_unavailable`).
 */
export function createPool(
  databaseUrl: string,
  schema: string,
  max = 20,
  gatewayId?: string,
  options: {
    synchronousCommit?: "off" | "local" | "on";
    /** Parameterised queries as named prepared statements (preparingClient.ts); default true. */
    prepareStatements?: boolean;
  } = {},
): pg.Pool {
  const { synchronousCommit, prepareStatements = true } = options;
  // `app.gateway_id` fills gateway_job.gateway_id by column default (migration 030): every job row names its owner.
  const gatewayOption = gatewayId ? ` -c app.gateway_id=${gatewayId}` : "";
  const commitOption = synchronousCommit ? ` -c synchronous_commit=${synchronousCommit}` : "";
  // A prepared statement is otherwise planned again at every call for as long as PostgreSQL's custom plans look
  // cheaper than the generic one, which is always for the statements that take arrays (preparingClient.ts).
  const planOption = prepareStatements ? " -c plan_cache_mode=force_generic_plan" : "";
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    options: `-c search_path="${schema}",public${gatewayOption}${commitOption}${planOption}`,
    query_timeout: QUERY_TIMEOUT_MS,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    ...(prepareStatements ? { Client: PreparingClient } : {}),
  });
  // An idle connection the server dropped (restart, network) must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  return pool;
}
