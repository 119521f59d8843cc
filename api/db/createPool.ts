import pg from "pg";

/**
 * One pool per process; every query of the gateway's own tables goes through it. Connections start with
 * `search_path` set to the gateway's schema, so queries name tables without it.
 */
export function createPool(databaseUrl: string, schema: string, max = 20): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max, options: `-c search_path="${schema}",public` });
}
