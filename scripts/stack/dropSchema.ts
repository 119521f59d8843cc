import pg from "pg";

/**
 * Drops a Postgres schema and everything in it. The local stack uses it for the indexer's schema when the
 * chain behind it is new (a fresh Hardhat node reuses chain id and contract addresses, so Ponder would
 * otherwise "resume" a chain that no longer exists).
 */
export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
