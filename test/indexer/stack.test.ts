import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { isPortFree } from "../../scripts/stack/ports.js";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startChain } from "../../scripts/stack/startChain.js";
import { startIndexer } from "../../scripts/stack/startIndexer.js";
import { startPostgres } from "../../scripts/stack/startPostgres.js";

// The stack building blocks on their own (ports 8673-8679 of the indexer tests' range).

const stateDirs: string[] = [];
function newStateDir(): string {
  mkdirSync(path.join(repoRoot, ".local"), { recursive: true });
  const dir = mkdtempSync(path.join(repoRoot, ".local", "test-stack-"));
  stateDirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

async function query(databaseUrl: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

describe("startPostgres", () => {
  it("initialises the data folder once and only starts it afterwards, keeping the data", async () => {
    const stateDir = newStateDir();
    const first = await startPostgres({ stateDir, port: 8673, externalUrl: null });
    await query(first.databaseUrl, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)");
    await first.stop();
    expect(await isPortFree(8673)).toBe(true);

    const second = await startPostgres({ stateDir, port: 8673, externalUrl: null });
    try {
      expect(second.databaseUrl).toBe(first.databaseUrl);
      expect((await query(second.databaseUrl, "SELECT n FROM kept")).rows).toEqual([{ n: 42 }]);
    } finally {
      await second.stop();
    }
  });

  it("uses the external server it is given instead of starting one", async () => {
    const external = "postgresql://user:secret@db.example:5432/app";
    const running = await startPostgres({ stateDir: newStateDir(), port: 8673, externalUrl: external });
    expect(running).toMatchObject({ databaseUrl: external, embedded: false });
    expect(await isPortFree(8673)).toBe(true);
    await running.stop();
  });
});

describe("startChain", () => {
  it("answers JSON-RPC when it resolves and frees its port after stop", async () => {
    const chain = await startChain({ port: 8674 });
    expect(chain).toMatchObject({ rpcUrl: "http://127.0.0.1:8674", chainId: 31337 });
    await chain.stop();
    expect(await isPortFree(8674)).toBe(true);
  });

  it("error: refuses a port that is already taken instead of hanging", async () => {
    const blocker = net.createServer().listen(8675, "127.0.0.1");
    await new Promise((resolve) => blocker.once("listening", resolve));
    try {
      await expect(startChain({ port: 8675 })).rejects.toThrow("port 8675 (hardhat node) is already in use");
    } finally {
      blocker.close();
    }
  });
});

describe("startIndexer", () => {
  it("error: fails fast when ponder exits before it is ready", async () => {
    const started = Date.now();
    await expect(
      startIndexer({
        databaseUrl: "postgresql://postgres:postgres@127.0.0.1:8676/none",
        databaseSchema: "never",
        rpcUrl: "http://127.0.0.1:8677",
        deploymentsFile: path.join(newStateDir(), "missing.json"),
        port: 8678,
      }),
    ).rejects.toThrow("the process exited before it was ready");
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(await isPortFree(8678)).toBe(true);
  });
});
