import { afterAll } from "vitest";
import { findFreePort } from "../../scripts/stack/ports.js";
import {
  startWorker,
  type RunningWorker,
  type WorkerFault,
  type WorkerSpec,
  WORKER_READY_TIMEOUT_MS,
} from "../../scripts/stack/startWorkers.js";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { contracts, freshAccount, modelCatalogAbi, publicClient } from "./chain.js";
import { modelKeyOf, type TierName } from "@credit-metered/client";
import { spareModelId } from "../../scripts/deploy/spareModels.js";
import { MODEL_CLAIMS_FOLDER } from "../../scripts/stack/startLocalStack.js";
import { diagnosed } from "./stackDiagnostics.js";
import { stackInfo } from "./stackInfo.js";
import { extraWorkerPorts } from "./testStackOptions.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

/**
 * Claims a catalog model no other test of this stack uses, of the given tier and context window. A catalog change
 * waits 2 days (ModelCatalog), so the test stacks list spare models at deployment (scripts/deploy/spareModels.ts)
 * and each test takes the next free one of its shape; a claim is an exclusively created folder, so test files in
 * parallel processes never share a model. `label` only names the claim, for whoever reads the state folder.
 */
export async function claimCatalogModel(
  label: string,
  { tier = "lite", contextWindow = 32_768 }: { tier?: TierName; contextWindow?: number } = {},
): Promise<string> {
  const claims = path.join(path.dirname(stackInfo().deploymentsFile), MODEL_CLAIMS_FOLDER);
  mkdirSync(claims, { recursive: true });
  for (let n = 1; ; n++) {
    const modelId = spareModelId(tier, contextWindow, n);
    const listed = await publicClient().readContract({
      address: contracts().modelCatalog,
      abi: modelCatalogAbi,
      functionName: "isListed",
      args: [modelKeyOf(modelId)],
    });
    if (!listed) throw new Error(`no spare ${tier} model with a ${contextWindow}-token window left (${label})`);
    try {
      mkdirSync(path.join(claims, modelId));
      writeFileSync(path.join(claims, modelId, "label"), `${label}\n`);
      return modelId;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
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
  const info = stackInfo();
  const ports = extraWorkerPorts(info.ports);
  const port = await findFreePort(ports.from, ports.to);
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

/**
 * How long a new worker may take to be routable: its registration indexed, then probed by the gateway's pool (every
 * 2 s). Seconds on a quiet machine; as long as a worker's own start-up allowance, since CI runs three stacks at once.
 */
const WORKER_ROUTABLE_TIMEOUT_MS = WORKER_READY_TIMEOUT_MS;

/** Waits until `GET /v1/models/{id}` reports at least `count` active workers. */
export async function waitUntilModelHasWorkers(modelId: string, apiKey: string, count: number): Promise<void> {
  let lastAnswer = "no answer yet";
  // A worker that never becomes routable is the index (lag, reads failing) or the gateway's pool: say which.
  await diagnosed(
    () =>
      waitFor(
        `${modelId} served by ${count} worker(s)`,
        async () => {
          const response = await fetch(`${stackInfo().apiUrl}/v1/models/${encodeURIComponent(modelId)}`, {
            headers: { authorization: `Bearer ${apiKey}` },
            signal: AbortSignal.timeout(5_000),
          });
          const text = await response.text();
          lastAnswer = `${response.status} ${text.slice(0, 300)}`;
          if (response.status !== 200) return false;
          const model = JSON.parse(text) as { service?: { active_workers?: number } };
          return (model.service?.active_workers ?? 0) >= count;
        },
        { timeoutMs: WORKER_ROUTABLE_TIMEOUT_MS, intervalMs: 200 },
      ),
    () => [`last model answer: ${lastAnswer}`],
  );
}
