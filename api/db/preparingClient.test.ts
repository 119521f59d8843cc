import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { createPool } from "./createPool.js";

const PORT = Number(process.env.PREPARING_CLIENT_TEST_PG_PORT ?? 10099);

/** Names of the statements prepared on the connection that answers this query. */
const PREPARED = "SELECT name, statement FROM pg_prepared_statements";

describe("PreparingClient (createPool's connections)", () => {
  let postgres: RunningPostgres;

  beforeAll(async () => {
    postgres = await startPostgres({
      stateDir: path.join(repoRoot, ".local", "preparing-client-unit"),
      port: PORT,
      externalUrl: null,
    });
  }, 120_000);

  afterAll(async () => {
    await postgres?.stop();
  });

  it("prepares a parameterised query once per connection and answers it as before", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    try {
      const text = "SELECT $1::int + 1 AS next";
      const first = await pool.query<{ next: number }>(text, [1]);
      const second = await pool.query<{ next: number }>(text, [41]);
      expect([first.rows[0]?.next, second.rows[0]?.next]).toEqual([2, 42]);
      const client = await pool.connect();
      try {
        const { rows } = await client.query<{ statement: string }>(PREPARED);
        expect(rows.filter((row) => row.statement === text)).toHaveLength(1);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("prepares the queries of a checked-out client too (transactions)", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    try {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const text = "SELECT $1::text || '!' AS shout";
        const { rows } = await client.query<{ shout: string }>(text, ["hi"]);
        await client.query("COMMIT");
        expect(rows[0]?.shout).toBe("hi!");
        const prepared = await client.query<{ statement: string }>(PREPARED);
        expect(prepared.rows.map((row) => row.statement)).toContain(text);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("plans a prepared statement once, not at every call (generic plan)", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    try {
      const text = "SELECT x FROM unnest($1::int[]) AS u(x) WHERE x > $2";
      for (let i = 0; i < 8; i++) await pool.query(text, [[1, 2, 3], i % 3]);
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1",
        [text],
      );
      expect(rows.map((row) => [Number(row.custom_plans), Number(row.generic_plans) > 0])).toEqual([[0, true]]);
    } finally {
      await pool.end();
    }
  });

  it("leaves a query without parameters unprepared", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    try {
      await pool.query("SELECT 1 AS one");
      const { rows } = await pool.query<{ statement: string }>(PREPARED);
      expect(rows.map((row) => row.statement)).not.toContain("SELECT 1 AS one");
    } finally {
      await pool.end();
    }
  });

  it("answers a prepared SELECT * whose table gained a column since (another process's migration)", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    const other = createPool(postgres.databaseUrl, "public", 1, undefined, { prepareStatements: false });
    try {
      await other.query("DROP TABLE IF EXISTS prepared_probe; CREATE TABLE prepared_probe (id int PRIMARY KEY)");
      await other.query("INSERT INTO prepared_probe VALUES (1)");
      const text = "SELECT * FROM prepared_probe WHERE id = $1";
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1 }]);
      await other.query("ALTER TABLE prepared_probe ADD COLUMN note text DEFAULT 'added'");
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, note: "added" }]);
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, note: "added" }]);
    } finally {
      await pool.end();
      await other.end();
    }
  });

  it("reports a statement's own error as before", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1);
    try {
      await expect(pool.query("SELECT 1 / $1::int", [0])).rejects.toMatchObject({ code: "22012" });
      expect((await pool.query<{ ok: number }>("SELECT $1::int AS ok", [3])).rows[0]?.ok).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it("can be turned off (a pooler in transaction mode)", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 1, undefined, { prepareStatements: false });
    try {
      await pool.query("SELECT $1::int AS n", [5]);
      const { rows } = await pool.query(PREPARED);
      expect(rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
