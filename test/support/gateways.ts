import { afterAll } from "vitest";
import { findFreePort } from "../../scripts/stack/ports.js";
import { startGateway, type RunningGateway } from "../../scripts/stack/startGateway.js";
import { freshAccount } from "./chain.js";
import { stackInfo } from "./stackInfo.js";
import { EXTRA_GATEWAY_PORTS } from "./testStackOptions.js";

const started: RunningGateway[] = [];

// Registered at import (collection time), so it runs after the importing file's tests.
afterAll(async () => {
  await Promise.all(started.splice(0).map((gateway) => gateway.stop()));
});

/**
 * A second gateway on the same chain, index and database (its own table schema) with other settings, e.g. a
 * low `RATE_LIMIT_MAX`. It signs with a fresh account without roles, so it cannot race the main gateway's
 * nonces; use it for requests that need no transaction. Stopped after the file's tests.
 */
export async function startExtraGateway(env: Record<string, string>, schema: string): Promise<RunningGateway> {
  const info = stackInfo();
  const { privateKey } = await freshAccount();
  const port = await findFreePort(EXTRA_GATEWAY_PORTS.from, EXTRA_GATEWAY_PORTS.to);
  const gateway = await startGateway({
    port,
    databaseUrl: info.databaseUrl,
    dbSchema: schema,
    indexerUrl: info.indexerUrl,
    rpcUrl: info.rpcUrl,
    deploymentsFile: info.deploymentsFile,
    gatewayPrivateKey: privateKey,
    workerGatewayToken: info.gatewayToken,
    env,
    logFile: `${info.stateDir}/logs/extra-gateway-${port}.log`,
  });
  started.push(gateway);
  return gateway;
}
