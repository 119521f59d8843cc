import { existsSync, statSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { isPortFree } from "../../scripts/stack/ports.js";
import { stackPorts, startLocalStack, type LocalStack } from "../../scripts/stack/startLocalStack.js";
import { chatBody, expectErrorBody, rawRequest } from "../support/api.js";

// `npm start` twice on one state folder: the Hardhat node is in memory, so the second start is a new chain, and
// everything the first run left in Postgres must be gone while the cluster itself is reused (no initdb).
// A stack of its own (ports 8740–8759, the range manual runs use; the suite's stack is on 8720–8739).
const ports = stackPorts(Number(process.env.TEST_RESTART_PORT_BASE ?? 8740));
const stateDir = path.join(repoRoot, ".local", "test-restart");

async function countRows(databaseUrl: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ count: string }>(`SELECT count(*) FROM ${table}`);
    return Number(result.rows[0]!.count);
  } finally {
    await client.end();
  }
}

function startRestartStack(): Promise<LocalStack> {
  return startLocalStack({ stateDir, ports, compile: false, buildWeb: false, workerCount: 2 });
}

describe("a second start on the same state folder", () => {
  let running: LocalStack | undefined;
  afterAll(async () => {
    await running?.stop();
  });

  it("serves a fresh chain with a reset database, reuses the Postgres cluster, and leaves no process behind", async () => {
    running = await startRestartStack();
    const first = running;
    const completion = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: first.demo.apiKey,
      body: chatBody("qwen3-1.7b"),
      baseUrl: first.apiUrl,
    });
    expect(completion.status, completion.body).toBe(200);
    expect(await countRows(first.databaseUrl, "api.gateway_job")).toBe(1);
    const cluster = path.join(stateDir, "postgres/data/PG_VERSION");
    const clusterCreated = statSync(cluster).mtimeMs;
    await first.stop();
    running = undefined;
    for (const port of [ports.rpc, ports.postgres, ports.indexer, ports.api, ports.workerBase, ports.workerBase + 1]) {
      expect(await isPortFree(port), `port ${port} free after stop`).toBe(true);
    }

    running = await startRestartStack();
    const second = running;
    // The cluster was started again, not initialised again.
    expect(existsSync(cluster)).toBe(true);
    expect(statSync(cluster).mtimeMs).toBe(clusterCreated);
    // Nothing of the first chain survives: gateway tables, index, and the old key (a new chain never saw it).
    expect(await countRows(second.databaseUrl, "api.gateway_job")).toBe(0);
    expect(await countRows(second.databaseUrl, "chain_index.job")).toBe(0);
    expect(second.demo.apiKey).not.toBe(first.demo.apiKey);
    const oldKey = await rawRequest("GET", "/v1/account", { apiKey: first.demo.apiKey, baseUrl: second.apiUrl });
    expectErrorBody(oldKey, 401, "invalid_api_key", { param: null });
    // And the new run serves requests.
    const again = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: second.demo.apiKey,
      body: chatBody("qwen3-1.7b"),
      baseUrl: second.apiUrl,
    });
    expect(again.status, again.body).toBe(200);
  }, 300_000);
});
