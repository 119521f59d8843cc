import { afterAll } from "vitest";
import { findFreePort } from "../../scripts/stack/ports.js";
import {
  startWorker,
  type RunningWorker,
  type WorkerFault,
  type WorkerSpec,
} from "../../scripts/stack/startWorkers.js";
import { adminAccount, contracts, freshAccount, mined, modelCatalogAbi, walletClient } from "./chain.js";
import { TIER_PRICES, tierIndex, type TierName } from "@credit-metered/client";
import { stackInfo } from "./stackInfo.js";
import { EXTRA_PORTS } from "./testStackOptions.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

let modelCounter = 0;

/** A model id no other test uses (catalog ids are forever on a chain). */
export function uniqueModelId(label: string): string {
  modelCounter += 1;
  return `test-${label}-${process.pid}-${modelCounter}`;
}

/** Governance (local account 0) adds a model to the catalog; it has no workers until one registers for it. */
export async function addCatalogModel(
  modelId: string,
  { tier = "lite", contextWindow = 32_768 }: { tier?: TierName; contextWindow?: number } = {},
): Promise<void> {
  const { creditsPerRequest, creditsPer1kTokens } = TIER_PRICES[tier];
  const hash = await walletClient(adminAccount).writeContract({
    address: contracts().modelCatalog,
    abi: modelCatalogAbi,
    functionName: "addModel",
    args: [
      modelId,
      {
        tier: tierIndex(tier),
        creditsPerRequest,
        creditsPer1kTokens,
        contextWindow,
        parameters: "1B",
        ownedBy: "test",
      },
    ],
  });
  await mined(hash);
}

export type ExtraWorkerOptions = Omit<WorkerSpec, "privateKey" | "port"> & { fault?: WorkerFault };

const started: RunningWorker[] = [];

// Registered when a test file imports this module (collection time): a hook registered later, from inside a
// beforeAll, would never run, and the workers would outlive the file.
afterAll(async () => {
  await Promise.all(started.splice(0).map((worker) => worker.stop()));
});

/**
 * Starts a worker of the test's own (fresh key, funded, staked, registered), stopped after the file's tests.
 * Resolves once the gateway lists all its models (`GET /v1/models`) with `apiKey`.
 */
export async function startExtraWorker(options: ExtraWorkerOptions, apiKey: string): Promise<RunningWorker> {
  const { privateKey } = await freshAccount();
  const port = await findFreePort(EXTRA_PORTS.from, EXTRA_PORTS.to);
  const info = stackInfo();
  const worker = await startWorker({
    spec: { ...options, privateKey, port },
    gatewayToken: info.gatewayToken,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    logFile: `${info.stateDir}/logs/extra-worker-${port}.log`,
  });
  started.push(worker);
  for (const model of options.models) await waitUntilModelHasWorkers(model, apiKey, 1);
  return worker;
}

/** Waits until `GET /v1/models/{id}` reports at least `count` active workers. */
export async function waitUntilModelHasWorkers(modelId: string, apiKey: string, count: number): Promise<void> {
  await waitFor(
    `${modelId} served by ${count} worker(s)`,
    async () => {
      const response = await fetch(`${stackInfo().apiUrl}/v1/models/${encodeURIComponent(modelId)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      if (response.status !== 200) return false;
      const model = (await response.json()) as { service?: { active_workers?: number } };
      return (model.service?.active_workers ?? 0) >= count;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
}
