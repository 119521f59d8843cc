import { afterAll } from "vitest";
import { startWorker, type RunningWorker, type WorkerFault } from "../../../scripts/stack/startWorkers.js";
import { freshAccount } from "../../support/chain.js";
import { stackInfo } from "../../support/stackInfo.js";
import { claimCatalogModel, waitUntilModelHasWorkers } from "../../support/workers.js";

const started: RunningWorker[] = [];
// Registered when a test file imports this module (a hook registered from inside beforeAll may not run).
afterAll(async () => {
  await Promise.all(started.splice(0).map((worker) => worker.stop()));
});

/**
 * A model of the test's own, served by one worker of its own (fresh key, staked, registered) on `port` (this
 * suite's range, `WEB_TEST_PORT_BASE` + 0–39). Upheld disputes slash the worker that served the job: they must not hit the shared
 * pool's workers, which other tests still need. Stopped after the file's tests.
 */
export async function startOwnWorker(
  label: string,
  port: number,
  apiKey: string,
  options: { fault?: WorkerFault } = {},
): Promise<{ model: string }> {
  const model = await claimCatalogModel(label, { tier: "lite" });
  const { privateKey } = await freshAccount();
  const info = stackInfo();
  const worker = await startWorker({
    spec: { privateKey, port, models: [model], ...(options.fault ? { fault: options.fault } : {}) },
    gatewayToken: info.gatewayToken,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    logFile: `${info.stateDir}/logs/web-test-worker-${port}.log`,
  });
  started.push(worker);
  await waitUntilModelHasWorkers(model, apiKey, 1);
  return { model };
}
