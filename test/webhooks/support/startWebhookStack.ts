import { mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { Deployment } from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";
import { createPool } from "../../../api/db/createPool.js";
import { migrate } from "../../../api/db/migrate.js";
import { deployContracts } from "../../../scripts/deploy/deployContracts.js";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { startChain } from "../../../scripts/stack/startChain.js";
import { startIndexer, type RunningIndexer } from "../../../scripts/stack/startIndexer.js";
import { startPostgres, type RunningPostgres } from "../../../scripts/stack/startPostgres.js";
import { waitForIndexedBlock } from "../../../scripts/stack/waitForIndexedBlock.js";
import { CHAIN_PORT, INDEXER_PORT, POSTGRES_PORT } from "./ports.js";

/** What the test files get from the global setup (serialisable). */
export interface WebhookStackInfo {
  rpcUrl: string;
  databaseUrl: string;
  indexerUrl: string;
  deploymentsFile: string;
  stateDir: string;
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

/** Real components: Hardhat node, contracts deployed, embedded PostgreSQL, the Ponder indexer. */
export async function startWebhookStack(): Promise<WebhookStack> {
  mkdirSync(path.join(repoRoot, ".local"), { recursive: true });
  const stateDir = mkdtempSync(path.join(repoRoot, ".local", "test-webhooks-"));
  const logFile = path.join(stateDir, "stack.log");
  const chain = await startChain({ port: CHAIN_PORT, logFile });
  let postgres: RunningPostgres | undefined;
  let indexer: RunningIndexer | undefined;
  try {
    postgres = await startPostgres({ stateDir, port: POSTGRES_PORT });
    const deploymentsFile = path.join(stateDir, "deployments.json");
    await deployContracts({ rpcUrl: chain.rpcUrl, outFile: deploymentsFile });
    indexer = await startIndexer({
      databaseUrl: postgres.databaseUrl,
      databaseSchema: "indexer_webhooks",
      rpcUrl: chain.rpcUrl,
      deploymentsFile,
      port: INDEXER_PORT,
      logFile,
      resetSchema: true,
    });
    const { indexerUrl } = indexer;
    const databaseUrl = postgres.databaseUrl;
    return {
      rpcUrl: chain.rpcUrl,
      databaseUrl,
      indexerUrl,
      deploymentsFile,
      stateDir,
      async stop() {
        await indexer?.stop();
        await postgres?.stop();
        await chain.stop();
      },
    };
  } catch (error) {
    await indexer?.stop();
    await postgres?.stop();
    await chain.stop();
    throw error;
  }
}
