import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { Hex } from "viem";
import { isPortFree } from "./ports.js";
import { repoRoot } from "./repoRoot.js";
import { LAUNCH_CATALOG, type Deployment } from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, LOCAL_WORKER_COUNT, localPrivateKey } from "@credit-metered/client/local";
import { loadDeployment } from "@credit-metered/client/node";
import { seedDemo, type DemoSeed } from "./seedDemo.js";
import { buildWeb } from "./buildWeb.js";
import { runToCompletion } from "./runToCompletion.js";
import { MAX_LOCAL_GATEWAYS, localGatewayAddress, localGatewayPrivateKey } from "../deploy/localGateways.js";
import { startGatewayProxy } from "./gatewayProxy.js";
import { setIntervalMining, startChain, type RunningChain } from "./startChain.js";
import { startGateway, type RunningGateway } from "./startGateway.js";
import { startIndexer, type RunningIndexer } from "./startIndexer.js";
import { startPostgres, type RunningPostgres } from "./startPostgres.js";
import {
  assignModels,
  launchWorkers,
  registerLaunchedWorkers,
  type LaunchedWorker,
  type WorkerSpec,
} from "./startWorkers.js";
import { waitFor } from "./waitFor.js";

/** The launch catalog's model ids; the deploy script lists them, the pool hosts them. */
export const LAUNCH_MODELS = LAUNCH_CATALOG.map((model) => model.id);

export type StackPorts = {
  rpc: number;
  postgres: number;
  indexer: number;
  api: number;
  web: number;
  /** Pool worker `i` listens on `workerBase + i`. */
  workerBase: number;
  /** With several gateways, gateway `i` listens on `gatewayBase + i` and a proxy on `api` spreads requests. */
  gatewayBase: number;
};

/**
 * Ports of a stack. With a base, the stack takes `base … base+4` for its services and `base+5 …` for
 * its workers (keep 20 ports between two stacks' bases), and with several gateways `base+20 …` for them;
 * without one, the usual local defaults (gateways from 8090).
 */
export function stackPorts(base?: number, overrides: Partial<StackPorts> = {}): StackPorts {
  const defaults: StackPorts =
    base === undefined
      ? { rpc: 8545, postgres: 5433, indexer: 42069, api: 8080, web: 5173, workerBase: 9101, gatewayBase: 8090 }
      : {
          rpc: base,
          postgres: base + 1,
          indexer: base + 2,
          api: base + 3,
          web: base + 4,
          workerBase: base + 5,
          gatewayBase: base + 20,
        };
  return { ...defaults, ...overrides };
}

export type LocalStackOptions = {
  /** Folder of this stack's data: deployments, Postgres cluster, logs, `stack.json`. */
  stateDir: string;
  ports: StackPorts;
  /** Pool size; each model gets `replicas` workers (default 4 workers, 2 replicas). */
  workerCount?: number;
  replicas?: number;
  /** Simulated backend settings for the pool. */
  workerDefaults?: Omit<WorkerSpec, "privateKey" | "port" | "models">;
  /** Extra gateway settings (api/config.ts), e.g. `JOB_TIMEOUT_MS`, `RATE_LIMIT_MAX`. */
  gatewayEnv?: Record<string, string>;
  /** Gateway processes (default 1). Each has its own signer with the gateway roles (scripts/deploy/localGateways.ts)
   *  and its own GATEWAY_ID; with more than one, a proxy on `ports.api` spreads requests over them. */
  gateways?: number;
  /** Test stacks: spare catalog models listed at deployment, per test shape (scripts/deploy/spareModels.ts); a
   *  catalog change waits 2 days, so tests claim these instead of adding models. Default 0. */
  spareModels?: number;
  /** Test stacks: local gateway signers with the gateway roles but no gateway process (a test's second opener),
   *  after the `gateways` ones (scripts/deploy/localGateways.ts). Default 0. */
  spareGatewaySigners?: number;
  /** Seconds between blocks once the stack is set up (interval mining); absent: automine, a block per transaction. */
  chainBlockTime?: number;
  /** The escrow's job timeout in seconds (default 120, the spec's); test stacks shorten it. */
  jobTimeoutSeconds?: number;
  /** Demo wallet funding, in whole stablecoin (100 credits each). Default 100. */
  demoUsdg?: bigint;
  /** Compile the contracts before deploying (default true; a no-op when nothing changed). */
  compile?: boolean;
  /** Build the web app (`web/` → `web/dist`, served by the gateway at `/`); default true when `web/` exists.
   *  A failed build is reported and the stack starts without it. */
  buildWeb?: boolean;
  /** Echo every child's output to stderr (otherwise it goes to `<stateDir>/logs/`). */
  echo?: boolean;
  /** Progress lines ("chain ready", …). */
  onProgress?: (message: string) => void;
};

export type StackInfo = {
  apiUrl: string;
  rpcUrl: string;
  indexerUrl: string;
  /** The indexer's GraphQL endpoint, for people. */
  graphqlUrl: string;
  webUrl: string | null;
  chainId: number;
  deploymentsFile: string;
  contracts: Deployment["contracts"];
  databaseUrl: string;
  gatewayToken: string;
  workers: { address: string; endpoint: string; models: string[] }[];
  /** Private keys (local, public) of the spare gateway signers: gateway roles from deployment, no process. */
  spareGatewaySignerKeys: Hex[];
  demo: DemoSeed;
  stateDir: string;
  ports: StackPorts;
  /** Process groups of the stack's children (fault-injection tests signal them); Postgres: its postmaster.
   *  `gateway` is the first gateway's. */
  pids: { chain: number; indexer: number; gateway: number; workers: number[]; postgres: number | null };
  /** Every gateway process (one unless `gateways` > 1; then `apiUrl` is the proxy in front of them). */
  gateways: StackGateway[];
  /** Seconds between blocks (interval mining), or null for automine. */
  chainBlockTime: number | null;
  /** The gateway's settings beyond the stack's wiring, so a test can start it again as it was. */
  gatewayEnv: Record<string, string>;
};

export type StackGateway = {
  apiUrl: string;
  pid: number;
  /** GATEWAY_ID of the process (its jobs' owner and its lease in gateway_lease). */
  gatewayId: string;
  /** Lowercase address of its signer. */
  signer: string;
};

export type LocalStack = StackInfo & {
  /** Stops everything in reverse order of start; safe to call twice. */
  stop: () => Promise<void>;
};

export const INDEXER_SCHEMA = "chain_index";
/** Folder of a stack's state where tests claim spare catalog models (test/support/workers.ts). */
export const MODEL_CLAIMS_FOLDER = "model-claims";
// Each child gets SIGINT then SIGKILL within its own grace; this bounds the rest (embedded Postgres waits for an
// exit event that never comes when a terminal Ctrl-C already reached it, since it shares our process group).
const STOP_TIMEOUT_MS = 15_000;
export const API_SCHEMA = "api";

/**
 * Starts the whole local stack: Hardhat node, contracts, embedded Postgres (reset to match the new chain),
 * indexer, gateway, a worker pool covering the launch catalog, and a funded demo wallet with a key.
 * Resolves once a chat completion can be served; writes `<stateDir>/stack.json`.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const stateDir = path.resolve(options.stateDir);
  const logDir = path.join(stateDir, "logs");
  // Logs describe one run (the chain is new each time).
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const report = options.onProgress ?? (() => {});
  // Each step's line says how long it took (the time since the previous line), so a slow step stands out.
  let stepStartedAt = Date.now();
  const progress = (message: string) => {
    const now = Date.now();
    report(`${message} (${formatSeconds(now - stepStartedAt)})`);
    stepStartedAt = now;
  };
  const echo = options.echo ?? false;
  const deploymentsFile = path.join(stateDir, "deployments.json");
  const webDistDir = path.join(stateDir, "web-dist");
  rmSync(deploymentsFile, { force: true });
  rmSync(path.join(stateDir, "stack.json"), { force: true });
  // Tests' claims on the spare catalog models (test/support/workers.ts) belong to the chain that is being replaced:
  // a state folder kept from an earlier run would otherwise leave the new chain's spares claimed.
  rmSync(path.join(stateDir, MODEL_CLAIMS_FOLDER), { recursive: true, force: true });

  const gatewayCount = options.gateways ?? 1;
  if (!Number.isInteger(gatewayCount) || gatewayCount < 1 || gatewayCount > MAX_LOCAL_GATEWAYS)
    throw new Error(`gateways: 1 to ${MAX_LOCAL_GATEWAYS}`);
  // Gateway signers with roles: the gateway processes' and the spare ones tests use as a second opener.
  const signerCount = gatewayCount + (options.spareGatewaySigners ?? 0);
  if (signerCount > MAX_LOCAL_GATEWAYS) throw new Error(`at most ${MAX_LOCAL_GATEWAYS} gateway signers`);
  const stops: { name: string; stop: () => Promise<void>; timeoutMs?: number }[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const { name, stop: stopOne, timeoutMs } of stops.reverse()) {
      await withTimeout(stopOne(), timeoutMs ?? STOP_TIMEOUT_MS).catch((error: unknown) =>
        report(`stopping ${name} failed: ${String(error)}`),
      );
    }
  };

  try {
    if (options.compile ?? true) {
      await runToCompletion("compile", path.join(repoRoot, "node_modules/.bin/hardhat"), ["compile", "--quiet"], {
        logFile: path.join(logDir, "compile.log"),
        echo,
      });
      progress("contracts compiled");
    }

    if (options.buildWeb ?? true) {
      // This stack's own copy (the gateway serves it): stacks of parallel test suites must not empty each other's.
      const web = await buildWeb(webDistDir, path.join(logDir, "web-build.log"), echo);
      if (web.status === "built") progress("web app built");
      else if (web.status === "cached") progress("web app unchanged, copied from its build cache");
      else if (web.status === "failed") {
        progress(`web app not built (${web.error.message.split("\n")[0]}); the API starts without it`);
      }
    }

    // The pool's processes need no chain or database and take seconds of CPU each to start (module loading, the
    // token counter's warm-up): they start now and overlap the chain, deployment and indexer, which mostly keep
    // one core busy; their registration waits for the contracts.
    const gatewayToken = randomBytes(24).toString("hex");
    const workerCount = options.workerCount ?? 4;
    if (workerCount > LOCAL_WORKER_COUNT) throw new Error(`at most ${LOCAL_WORKER_COUNT} pool workers`);
    const assignment = assignModels(LAUNCH_MODELS, workerCount, options.replicas ?? 2);
    const workers: LaunchedWorker[] = await launchWorkers({
      specs: assignment.map((models, index) => ({
        ...options.workerDefaults,
        privateKey: localPrivateKey(LOCAL_ACCOUNT_INDEX.firstWorker + index),
        port: options.ports.workerBase + index,
        models,
      })),
      gatewayToken,
      logDir,
      echo,
    });
    for (const worker of workers) stops.push({ name: `worker ${worker.endpoint}`, stop: worker.stop });
    progress(`${workers.length} worker processes launched`);

    const chain: RunningChain = await startChain({
      port: options.ports.rpc,
      logFile: path.join(logDir, "chain.log"),
      echo,
    });
    stops.push({ name: "chain", stop: chain.stop });
    progress(`chain ready at ${chain.rpcUrl}`);

    await runToCompletion(
      "deploy",
      path.join(repoRoot, "node_modules/.bin/tsx"),
      [
        "scripts/deploy/cli.ts",
        "--rpc-url",
        chain.rpcUrl,
        "--out",
        deploymentsFile,
        ...(options.jobTimeoutSeconds ? ["--job-timeout", String(options.jobTimeoutSeconds)] : []),
        ...(signerCount > 1 ? ["--gateway-count", String(signerCount)] : []),
        ...(options.spareModels ? ["--spare-models", String(options.spareModels)] : []),
      ],
      { logFile: path.join(logDir, "deploy.log"), echo },
    );
    const deployments = loadDeployment(deploymentsFile);
    progress("contracts deployed");

    const postgres: RunningPostgres = await startPostgres({ stateDir, port: options.ports.postgres });
    stops.push({
      name: "postgres",
      // A terminal's Ctrl-C reaches the embedded server directly (it shares our process group) and it shuts
      // itself down; its stop() would then wait for an exit that already happened.
      stop: async () => {
        if (postgres.embedded && (await isPortFree(options.ports.postgres))) return;
        await postgres.stop();
      },
      timeoutMs: 5_000,
    });
    // The Hardhat node starts from block 0 every time: whatever an earlier run indexed or recorded belongs
    // to a chain that no longer exists, Ponder's RPC cache included (same chain id), so it goes.
    await resetDatabase(postgres);
    progress("postgres ready (reset for the new chain)");

    const indexer: RunningIndexer = await startIndexer({
      databaseUrl: postgres.databaseUrl,
      databaseSchema: INDEXER_SCHEMA,
      rpcUrl: chain.rpcUrl,
      deploymentsFile,
      port: options.ports.indexer,
      logFile: path.join(logDir, "indexer.log"),
      echo,
    });
    stops.push({ name: "indexer", stop: indexer.stop });
    progress(`indexer ready at ${indexer.indexerUrl}`);

    await registerLaunchedWorkers(workers, { rpcUrl: chain.rpcUrl, deploymentsFile });
    progress(`${workers.length} workers registered and answering`);

    const demo = await seedDemo({ rpcUrl: chain.rpcUrl, deploymentsFile }, { usdg: options.demoUsdg ?? 100n });
    progress(`demo wallet ${demo.wallet} funded with ${demo.credits} credits`);

    const gatewayEnv: Record<string, string> = {
      LOG_LEVEL: "info",
      // Local chain: the web app offers the demo wallet and a test-stablecoin faucet (api/config.ts).
      APP_DEV_MODE: "true",
      // The origin this stack prints (the proxy's with several gateways): the web sign-in is bound to it.
      APP_URL: `http://127.0.0.1:${options.ports.api}`,
      // Several gateways sit behind the local proxy, which sets X-Forwarded-For itself (gatewayProxy.ts).
      ...(gatewayCount > 1 ? { TRUSTED_PROXIES: "loopback" } : {}),
      ...(webDistExists(webDistDir) ? { WEB_DIST_DIR: webDistDir } : {}),
      // A chain that mines on a clock can reorg: chain facts are announced two blocks deep (docs/DESIGN.md
      // "Finality"). Automine keeps 1: blocks only come with transactions, so a deeper rule would hold the last fact.
      ...(options.chainBlockTime !== undefined ? { CHAIN_FINALITY_DEPTH: "2" } : {}),
      ...options.gatewayEnv,
    };
    if (options.chainBlockTime !== undefined) {
      // Set-up transactions above were automined; from here on the chain mines on its own clock.
      await setIntervalMining(chain.rpcUrl, options.chainBlockTime);
      progress(`chain mines a block every ${options.chainBlockTime} s`);
    }

    const gateways: StackGateway[] = [];
    for (let i = 0; i < gatewayCount; i++) {
      const single = gatewayCount === 1;
      const gatewayId = single ? undefined : `gateway-${i}`;
      const gateway: RunningGateway = await startGateway({
        port: single ? options.ports.api : options.ports.gatewayBase + i,
        databaseUrl: postgres.databaseUrl,
        dbSchema: API_SCHEMA,
        indexerUrl: indexer.indexerUrl,
        rpcUrl: chain.rpcUrl,
        deploymentsFile,
        gatewayPrivateKey: localGatewayPrivateKey(i),
        workerGatewayToken: gatewayToken,
        env: { ...gatewayEnv, ...(gatewayId ? { GATEWAY_ID: gatewayId } : {}) },
        logFile: path.join(logDir, single ? "gateway.log" : `gateway-${i}.log`),
        echo,
      });
      stops.push({ name: `gateway ${i}`, stop: gateway.stop });
      const signer = localGatewayAddress(i).toLowerCase();
      gateways.push({ apiUrl: gateway.apiUrl, pid: gateway.pid, gatewayId: gatewayId ?? `gw-${signer}`, signer });
    }
    let apiUrl = gateways[0]?.apiUrl ?? "";
    if (gatewayCount > 1) {
      const proxy = await startGatewayProxy({
        port: options.ports.api,
        upstreams: gateways.map((gateway) => gateway.apiUrl),
        docsUrl: `http://127.0.0.1:${options.ports.api}/docs`,
      });
      // Stopped after the gateways (stops run in reverse), so none of them loses a client mid-answer first.
      stops.splice(stops.length - gatewayCount, 0, { name: "gateway proxy", stop: proxy.stop });
      apiUrl = proxy.url;
    }
    for (const gateway of gateways) await waitUntilServing(gateway.apiUrl, demo.apiKey, LAUNCH_MODELS.length);
    progress(gatewayCount > 1 ? `${gatewayCount} gateways ready behind ${apiUrl}` : `gateway ready at ${apiUrl}`);

    const info: StackInfo = {
      apiUrl,
      rpcUrl: chain.rpcUrl,
      indexerUrl: indexer.indexerUrl,
      graphqlUrl: `${indexer.indexerUrl}/graphql`,
      webUrl: webDistExists(webDistDir) ? `${apiUrl}/` : null,
      chainId: deployments.chainId,
      deploymentsFile,
      contracts: deployments.contracts,
      databaseUrl: postgres.databaseUrl,
      gatewayToken,
      workers: workers.map(({ address, endpoint, models }) => ({ address, endpoint, models })),
      spareGatewaySignerKeys: Array.from({ length: signerCount - gatewayCount }, (_, i) =>
        localGatewayPrivateKey(gatewayCount + i),
      ),
      demo,
      stateDir,
      ports: options.ports,
      pids: {
        chain: chain.pid,
        indexer: indexer.pid,
        gateway: gateways[0]?.pid ?? 0,
        workers: workers.map((worker) => worker.pid),
        postgres: postgres.embedded ? postmasterPid(stateDir) : null,
      },
      gatewayEnv,
      gateways,
      chainBlockTime: options.chainBlockTime ?? null,
    };
    writeFileSync(path.join(stateDir, "stack.json"), `${JSON.stringify(info, null, 2)}\n`);
    return { ...info, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not stop within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Drops what the previous run left: the whole database when embedded, our schemas on an external server. */
async function resetDatabase(postgres: RunningPostgres): Promise<void> {
  const url = new URL(postgres.databaseUrl);
  const database = decodeURIComponent(url.pathname.slice(1));
  if (postgres.embedded) {
    const adminUrl = new URL(url);
    adminUrl.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    try {
      const name = admin.escapeIdentifier(database);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return;
  }
  const client = new pg.Client({ connectionString: postgres.databaseUrl });
  await client.connect();
  try {
    for (const schema of [INDEXER_SCHEMA, API_SCHEMA, "ponder_sync"]) {
      await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
    }
  } finally {
    await client.end();
  }
}

/** Waits until the gateway knows the demo key and lists `modelCount` models (workers indexed and healthy). */
async function waitUntilServing(apiUrl: string, apiKey: string, modelCount: number): Promise<void> {
  await waitFor(
    "gateway model list",
    async () => {
      const response = await fetch(`${apiUrl}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
      if (response.status !== 200) return false;
      const body = (await response.json()) as { data?: unknown[] };
      return (body.data?.length ?? 0) >= modelCount;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** The embedded server's postmaster pid (first line of `postmaster.pid` in its data folder). */
function postmasterPid(stateDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path.join(stateDir, "postgres", "data", "postmaster.pid"), "utf8"), 10);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

function webDistExists(webDistDir: string): boolean {
  return existsSync(path.join(webDistDir, "index.html"));
}
