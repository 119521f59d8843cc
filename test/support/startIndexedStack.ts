import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { createClient } from "@ponder/client";
import type { Deployment } from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";
import { preloadStatementStats } from "../../bench/dbStats.js";
import * as schema from "../../indexer/ponder.schema.js";
import { deployContracts } from "../../scripts/deploy/deployContracts.js";
import { repoRoot } from "../../scripts/stack/repoRoot.js";
import { startChain, type RunningChain } from "../../scripts/stack/startChain.js";
import { startIndexer, type RunningIndexer } from "../../scripts/stack/startIndexer.js";
import { startPostgres, type RunningPostgres } from "../../scripts/stack/startPostgres.js";
import { waitForIndexedBlock } from "../../scripts/stack/waitForIndexedBlock.js";

export type IndexedStackPorts = { chain: number; postgres: number; indexer: number };

/** Ports of the indexer suite (8670-8689 are reserved for it). */
export const INDEXER_TEST_PORTS: IndexedStackPorts = { chain: 8670, postgres: 8671, indexer: 8672 };

export type IndexerClient = ReturnType<typeof createClient<typeof schema>>;

export type IndexedStack = {
  /** `.local/test-<name>-…`: the database, the deployments and the logs; removed by `stop` unless KEEP_TEST_STATE=1. */
  stateDir: string;
  chain: RunningChain;
  postgres: RunningPostgres;
  deployment: Deployment;
  deploymentsFile: string;
  databaseSchema: string;
  indexerUrl: string;
  /** Reads the indexed tables the way the gateway does: @ponder/client over `/sql`. */
  client: IndexerClient;
  /** Resolves once the indexer has processed `blockNumber`. */
  indexed: (blockNumber: bigint) => Promise<void>;
  stopIndexer: () => Promise<void>;
  startIndexer: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * A fresh Hardhat node with the contracts deployed, embedded Postgres in a new folder, and the indexer (schema
 * `indexer_<name>`): the stack of the suites that need the chain's read model without a gateway (indexer, webhooks).
 */
export async function startIndexedStack(
  name: string,
  ports: IndexedStackPorts = INDEXER_TEST_PORTS,
  options: {
    /**
     * Load `pg_stat_statements` (tracking nested statements too), for tests of which statements Ponder sends: the
     * embedded server then, even when `DATABASE_URL` names another (which may not preload it).
     */
    statementStats?: boolean;
  } = {},
): Promise<IndexedStack> {
  mkdirSync(path.join(repoRoot, ".local"), { recursive: true });
  const stateDir = mkdtempSync(path.join(repoRoot, ".local", `test-${name}-`));
  const chain = await startChain({ port: ports.chain, logFile: path.join(stateDir, "chain.log") });
  let postgres: RunningPostgres | undefined;
  let indexer: RunningIndexer | undefined;
  try {
    if (options.statementStats) await preloadStatementStats(stateDir, ports.postgres);
    postgres = await startPostgres({
      stateDir,
      port: ports.postgres,
      ...(options.statementStats ? { externalUrl: null } : {}),
    });
    const deploymentsFile = path.join(stateDir, "deployments.json");
    await deployContracts({ rpcUrl: chain.rpcUrl, outFile: deploymentsFile });
    const deployment = loadDeployment(deploymentsFile);
    const databaseSchema = `indexer_${name}`;
    const databaseUrl = postgres.databaseUrl;
    const launch = async (resetSchema: boolean) =>
      startIndexer({
        databaseUrl,
        databaseSchema,
        rpcUrl: chain.rpcUrl,
        deploymentsFile,
        port: ports.indexer,
        logFile: path.join(stateDir, "indexer.log"),
        logLevel: "info",
        resetSchema,
      });
    indexer = await launch(true);
    const indexerUrl = indexer.indexerUrl;
    const stack: IndexedStack = {
      stateDir,
      chain,
      postgres,
      deployment,
      deploymentsFile,
      databaseSchema,
      indexerUrl,
      client: createClient(`${indexerUrl}/sql`, { schema }),
      indexed: (blockNumber) => waitForIndexedBlock(indexerUrl, blockNumber),
      stopIndexer: async () => {
        await indexer?.stop();
        indexer = undefined;
      },
      startIndexer: async () => {
        indexer = await launch(false);
      },
      stop: async () => {
        await indexer?.stop();
        await postgres?.stop();
        await chain.stop();
        // Logs and data stay for a look after a failure only when asked for.
        if (process.env.KEEP_TEST_STATE !== "1") rmSync(stateDir, { recursive: true, force: true });
      },
    };
    return stack;
  } catch (error) {
    await indexer?.stop();
    await postgres?.stop();
    await chain.stop();
    throw error;
  }
}
