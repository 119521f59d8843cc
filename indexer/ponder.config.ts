import { createConfig } from "ponder";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  modelCatalogAbi,
  workerRegistryAbi,
} from "@credit-metered/client";
import { loadDeployment } from "@credit-metered/client/node";
// The ABIs every component shares (generated from the artifacts and checked against them by the contract tests).
import { chainTransport } from "./config/chainTransport.js";
import { readIndexerEnv } from "./config/readIndexerEnv.js";

const env = readIndexerEnv();
const deployments = loadDeployment(env.DEPLOYMENTS_FILE);
const { contracts, startBlock } = deployments;

// Local development chains (Hardhat, Anvil) reuse their chain id after every restart, so Ponder's RPC cache
// (shared by every schema in the database) would serve blocks of a chain that no longer exists.
const isLocalChain = deployments.chainId === 31337 || deployments.chainId === 1337;
// Ponder's limiter starts a custom transport at 20 requests/s and rises 5% per 10 busy seconds; with head polls
// taking 10 of them, a local automine node that mines a block per transaction left the index seconds behind at
// load (indexer/README.md "JSON-RPC rate"). A local node has no rate limit to respect.
const LOCAL_NODE_MAX_RPS = 500;
const maxRequestsPerSecond = env.PONDER_RPC_MAX_RPS ?? (isLocalChain ? LOCAL_NODE_MAX_RPS : undefined);

export default createConfig({
  // The database comes from DATABASE_URL (Postgres) and the schema from DATABASE_SCHEMA / --schema.
  chains: {
    app: {
      id: deployments.chainId,
      // Not the URL itself: Ponder's own HTTP client lets a stalled node wedge live indexing (config/chainTransport.ts).
      rpc: chainTransport({
        urls: [env.PONDER_RPC_URL, ...env.PONDER_RPC_FALLBACK_URLS],
        attemptTimeoutMs: env.PONDER_RPC_ATTEMPT_TIMEOUT_MS,
        hedgeAfterMs: env.PONDER_RPC_HEDGE_AFTER_MS,
        headTimeoutMs: env.PONDER_RPC_HEAD_TIMEOUT_MS,
        stallBudgetMs: env.PONDER_RPC_STALL_BUDGET_MS,
        onStateChange: ({ state, method, stalledMs }) =>
          console.warn(
            state === "stalled"
              ? `chain node not answering (${method}); holding requests and serving the last known head`
              : `chain node answering again after ${stalledMs} ms (${method})`,
          ),
      }),
      ...(env.PONDER_WS_URL ? { ws: env.PONDER_WS_URL } : {}),
      pollingInterval: env.PONDER_POLLING_INTERVAL_MS,
      ...(maxRequestsPerSecond === undefined ? {} : { maxRequestsPerSecond }),
      disableCache: isLocalChain,
    },
  },
  contracts: {
    CreditEscrow: { chain: "app", abi: creditEscrowAbi, address: contracts.creditEscrow, startBlock },
    ApiKeyRegistry: { chain: "app", abi: apiKeyRegistryAbi, address: contracts.apiKeyRegistry, startBlock },
    ModelCatalog: { chain: "app", abi: modelCatalogAbi, address: contracts.modelCatalog, startBlock },
    WorkerRegistry: { chain: "app", abi: workerRegistryAbi, address: contracts.workerRegistry, startBlock },
    DisputeManager: { chain: "app", abi: disputeManagerAbi, address: contracts.disputeManager, startBlock },
  },
});
