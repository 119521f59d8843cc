import pg from "pg";
import type { Deployment } from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";
import { createPool } from "../../../api/db/createPool.js";
import { migrate } from "../../../api/db/migrate.js";
import { waitForIndexedBlock } from "../../../scripts/stack/waitForIndexedBlock.js";
import { startIndexedStack } from "../../support/startIndexedStack.js";
import { CHAIN_PORT, INDEXER_PORT, POSTGRES_PORT } from "./ports.js";

/** What the test files get from the global setup (serialisable). */
export interface WebhookStackInfo {
  rpcUrl: string;
  databaseUrl: string;
  indexerUrl: string;
  deploymentsFile: string;
  stateDir: string;
  /** The index's Postgres schema (its block notifications come on `indexNotifyChannel(indexSchema)`). */
  indexSchema: string;
}

export interface WebhookStack extends WebhookStackInfo {
  stop(): Promise<void>;
}

/**
 * A gateway schema of its own for one test (dropped first, migrations applied), so each test starts from an
 * empty webhook state while sharing the chain, the database server and the indexer.
 */
export async function freshGatewaySchema(
  databaseUrl: string,
  name: string,
): Promise<{ schema: string; pool: pg.Pool }> {
  const schema = `webhooks_${name}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
  const pool = createPool(databaseUrl, schema);
  await migrate(pool, schema);
  return { schema, pool };
}

export function loadStackDeployment(info: WebhookStackInfo): Deployment {
  return loadDeployment(info.deploymentsFile);
}

export const indexed = (info: WebhookStackInfo, blockNumber: bigint) =>
  waitForIndexedBlock(info.indexerUrl, blockNumber);

/** Real components: Hardhat node, contracts deployed, embedded PostgreSQL, the Ponder indexer (on this suite's ports). */
export async function startWebhookStack(): Promise<WebhookStack> {
  const stack = await startIndexedStack("webhooks", {
    chain: CHAIN_PORT,
    postgres: POSTGRES_PORT,
    indexer: INDEXER_PORT,
  });
  return {
    rpcUrl: stack.chain.rpcUrl,
    databaseUrl: stack.postgres.databaseUrl,
    indexerUrl: stack.indexerUrl,
    deploymentsFile: stack.deploymentsFile,
    stateDir: stack.stateDir,
    indexSchema: stack.databaseSchema,
    stop: stack.stop,
  };
}
