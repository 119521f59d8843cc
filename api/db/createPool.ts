import pg from "pg";

/** One pool per process; every query of the gateway's own tables goes through it. */
export function createPool(databaseUrl: string, max = 20): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max });
}
