import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { createClient } from "@ponder/client";
import type { Deployment } from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";
import * as schema from "../../../indexer/ponder.schema.js";
import { deployContracts } from "../../../scripts/deploy/deployContracts.js";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { startChain, type RunningChain } from "../../../scripts/stack/startChain.js";
import { startIndexer, type RunningIndexer } from "../../../scripts/stack/startIndexer.js";
import { startPostgres, type RunningPostgres } from "../../../scripts/stack/startPostgres.js";
import { waitForIndexedBlock } from "../../../scripts/stack/waitForIndexedBlock.js";

// Ports of the indexer tests (8670-8689 are reserved for them).
const CHAIN_PORT = 8670;
const POSTGRES_PORT = 8671;
const INDEXER_PORT = 8672;

export type IndexerClient = ReturnType<typeof createClient<typeof schema>>;

export type IndexedStack = {
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

/** A fresh Hardhat node with the contracts deployed, embedded Postgres in a new folder, and the indexer. */
export async function startIndexedStack(name: string): Promise<IndexedStack> {
  mkdirSync(path.join(repoRoot, ".local"), { recursive: true });
  const stateDir = mkdtempSync(path.join(repoRoot, ".local", `test-${name}-`));
  const chain = await startChain({ port: CHAIN_PORT, logFile: path.join(stateDir, "chain.log") });
  let postgres: RunningPostgres | undefined;
  let indexer: RunningIndexer | undefined;
  try {
    postgres = await startPostgres({ stateDir, port: POSTGRES_PORT });
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
        port: INDEXER_PORT,
        logFile: path.join(stateDir, "indexer.log"),
        logLevel: "info",
        resetSchema,
      });
    indexer = await launch(true);
    const indexerUrl = indexer.indexerUrl;
    const stack: IndexedStack = {
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
