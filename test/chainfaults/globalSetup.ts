import type { TestProject } from "vitest/node";
import { stackGlobalSetup } from "../support/stackGlobalSetup.js";
import {
  CHAINFAULTS_GATEWAY_ENV,
  CHAINFAULTS_STATE_DIR,
  CHAINFAULTS_WORKER_DEFAULTS,
  RPC_PROXY_PORT,
  chainfaultsPorts,
} from "./chainfaultsStack.js";
import { startRpcProxy, type RpcProxy } from "./rpcProxy.js";

// One stack on a chain mining a block every second (as an L2 does), its gateway reading and broadcasting through
// two RPC endpoints: the suite's stallable proxy first, the node itself second.
const stack = stackGlobalSetup({
  label: "chain-fault stack",
  stateDir: CHAINFAULTS_STATE_DIR,
  ports: chainfaultsPorts,
  chainBlockTime: 1,
  gatewayEnv: CHAINFAULTS_GATEWAY_ENV,
  workerDefaults: CHAINFAULTS_WORKER_DEFAULTS,
  buildWeb: false,
});

let proxy: RpcProxy | undefined;

export async function setup(project: TestProject): Promise<void> {
  proxy = await startRpcProxy(RPC_PROXY_PORT, `http://127.0.0.1:${chainfaultsPorts.rpc}`);
  await stack.setup(project);
}

export async function teardown(): Promise<void> {
  await stack.teardown();
  await proxy?.stop();
}
