import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { createPool, IDLE_TIMEOUT_MS } from "./createPool.js";

const PORT = Number(process.env.CREATE_POOL_TEST_PG_PORT ?? 10094);

describe("createPool", () => {
  let postgres: RunningPostgres;

  beforeAll(async () => {
    postgres = await startPostgres({
      stateDir: path.join(repoRoot, ".local", "create-pool-unit"),
      port: PORT,
      externalUrl: null,
    });
  }, 120_000);

  afterAll(async () => {
    await postgres?.stop();
  });

  it("runs every connection with the synchronous_commit it is given", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 2, undefined, { synchronousCommit: "off" });
    try {
      const clients = await Promise.all([pool.connect(), pool.connect()]);
      const settings = await Promise.all(clients.map((client) => client.query("SHOW synchronous_commit")));
      for (const client of clients) client.release();
      expect(settings.map((result) => (result.rows[0] as { synchronous_commit: string }).synchronous_commit)).toEqual([
        "off",
        "off",
      ]);
    } finally {
      await pool.end();
    }
  });

  it("keeps the server's own setting when none is given", async () => {
    const pool = createPool(postgres.databaseUrl, "public");
    try {
      const result = await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit");
      expect(result.rows[0]?.synchronous_commit).toBe("on");
    } finally {
      await pool.end();
    }
  });

  it("keeps an idle connection open for IDLE_TIMEOUT_MS, not node-postgres's 10 s", async () => {
    const pool = createPool(postgres.databaseUrl, "public", 2);
    try {
      expect(pool.options.idleTimeoutMillis).toBe(IDLE_TIMEOUT_MS);
      expect(IDLE_TIMEOUT_MS).toBeGreaterThan(10_000);
      const first = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(pool.idleCount).toBe(1);
      const again = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(again.rows[0]?.pid).toBe(first.rows[0]?.pid);
    } finally {
      await pool.end();
    }
  });
});
