import { mkdirSync, mkdtempSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadDeployment, type Deployment } from "../../../contracts/client/deployment.js";
import { createPool } from "../../../api/db/createPool.js";
import { migrate } from "../../../api/db/migrate.js";
import { deployContracts } from "../../../scripts/deploy/deployContracts.js";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { startChain, type RunningChain } from "../../../scripts/stack/startChain.js";
import { startIndexer, type RunningIndexer } from "../../../scripts/stack/startIndexer.js";
import { startPostgres, type RunningPostgres } from "../../../scripts/stack/startPostgres.js";
import { waitForIndexedBlock } from "../../../scripts/stack/waitForIndexedBlock.js";
import { CHAIN_PORT, INDEXER_PORT, POSTGRES_PORT } from "./ports.js";

export interface WebhookStack {
  chain: RunningChain;
  postgres: RunningPostgres;
  deployment: Deployment;
  indexerUrl: string;
  stateDir: string;
  /** A gateway schema of its own (migrations applied), so each test starts from an empty webhook state. */
  freshGatewaySchema(name: string): Promise<{ schema: string; pool: pg.Pool }>;
  indexed(blockNumber: bigint): Promise<void>;
  stop(): Promise<void>;
}

/** Real components: Hardhat node, contracts deployed, embedded PostgreSQL, the Ponder indexer. */
export async function startWebhookStack(): Promise<WebhookStack> {
  mkdirSync(path.join(repoRoot, ".local"), { recursive: true });
  const stateDir = mkdtempSync(path.join(repoRoot, ".local", "test-webhooks-"));
  const logFile = path.join(stateDir, "stack.log");
  const chain = await startChain({ port: CHAIN_PORT, logFile });
  let postgres: RunningPostgres | undefined;
  let indexer: RunningIndexer | undefined;
  const pools: pg.Pool[] = [];
  try {
    postgres = await startPostgres({ stateDir, port: POSTGRES_PORT });
    const deploymentsFile = path.join(stateDir, "deployments.json");
    await deployContracts({ rpcUrl: chain.rpcUrl, outFile: deploymentsFile });
    const deployment = loadDeployment(deploymentsFile);
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
      chain,
      postgres,
      deployment,
      indexerUrl,
      stateDir,
      async freshGatewaySchema(name) {
        const schema = `webhooks_${name}`;
        const admin = new pg.Client({ connectionString: databaseUrl });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
        const pool = createPool(databaseUrl, schema);
        pools.push(pool);
        await migrate(pool, schema);
        return { schema, pool };
      },
      indexed: (blockNumber) => waitForIndexedBlock(indexerUrl, blockNumber),
      async stop() {
        await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
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
