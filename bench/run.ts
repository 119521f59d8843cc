import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import pg from "pg";
import { createPublicClient, http as viemHttp, parseEventLogs, type Hex } from "viem";
import { creditEscrowAbi } from "@credit-metered/client";
import { IndexProbe } from "./indexProbe.js";
import type { TokenDelivery } from "../shared/workerProtocol/index.js";
import { repoRoot } from "../scripts/stack/repoRoot.js";
import {
  countKinds,
  errorKind,
  gatewayComplete,
  gatewayStream,
  workerStream,
  type Timed,
  type TimedOptions,
} from "./clients.js";
import {
  CommitCounter,
  DbBreakdown,
  preloadStatementStats,
  STATS_FLUSH_MS,
  type DbBreakdownResult,
} from "./dbStats.js";
import { describeMachine, describeSource } from "./machine.js";
import {
  BENCH_PORT_BASE,
  BENCH_STATE_DIR,
  BENCH_WORKER,
  GATEWAY_NODE_OPTIONS,
  obtainStack,
  type BenchStack,
} from "./obtainStack.js";
import { stackPorts } from "../scripts/stack/startLocalStack.js";
import { cpuMeter, memoryMb, pidOfPort, processTree, type Watched } from "./procStats.js";
import { renderMarkdown } from "./renderMarkdown.js";
import { quantiles, round, type Quantiles } from "./stats.js";
import { seedWallets } from "./wallets.js";

/**
 * `npm run bench`: measures the gateway against the same simulated workers, on a real local stack, once per chain
 * mode (automine, then a block every second: BENCH_CHAIN_MODES). Asserts nothing; writes bench/results/latest.json
 * and latest.md. Durations are env-tunable (BENCH_*); the defaults keep the whole run near a quarter of an hour on a
 * 2-core machine. `--quick` (or BENCH_QUICK=1) shortens every measure to prove the bench works in a few minutes;
 * its figures are not comparable.
 */

const QUICK = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
/** A setting from the environment, else its full-run or quick-run default. */
const setting = (name: string, full: string, quick: string) => process.env[name] ?? (QUICK ? quick : full);
const numbers = (text: string) => text.split(",").map(Number);

const LATENCY_LEVELS = numbers(setting("BENCH_LATENCY_LEVELS", "1,50,200", "1,50"));
const LATENCY_SECONDS = Number(setting("BENCH_LATENCY_SECONDS", "8", "3"));
const THROUGHPUT_LEVELS = numbers(setting("BENCH_THROUGHPUT_LEVELS", "25,50,100,200", "25"));
const THROUGHPUT_SECONDS = Number(setting("BENCH_THROUGHPUT_SECONDS", "10", "4"));
/** Open loop: requests arriving at these fixed rates (per second), each rate for this long. */
const OPEN_LOOP_RATES = numbers(setting("BENCH_OPEN_LOOP_RATES", "50,100,200,400", "50,100"));
const OPEN_LOOP_SECONDS = Number(setting("BENCH_OPEN_LOOP_SECONDS", "6", "3"));
/** One wallet against many: this many closed-loop clients for this long in each of the four runs. */
const SINGLE_WALLET_CLIENTS = Number(setting("BENCH_SINGLE_WALLET_CLIENTS", "50", "25"));
const SINGLE_WALLET_SECONDS = Number(setting("BENCH_SINGLE_WALLET_SECONDS", "8", "4"));
/** Client wallets seeded for the traffic spread over many wallets (throughput, open loop, singleWallet). */
const WALLETS = Number(setting("BENCH_WALLETS", "16", "4"));
/** Whole completions at one client, through the gateway and direct each (wholeCompletionAddedMs). */
const WHOLE_SAMPLES = Number(setting("BENCH_WHOLE_SAMPLES", "12", "4"));
/** Chain modes measured in turn: `automine` or seconds between blocks. */
const CHAIN_MODES = setting("BENCH_CHAIN_MODES", "automine,1", "automine,1")
  .split(",")
  .map((mode) => mode.trim());
/**
 * Gateway processes of the bench stack. Two by default: every measure but the two-gateway runs of `singleWallet`
 * sends to the first one only (the second idles, its CPU still counted under "gateway"); with one, the two-gateway
 * figures are left out.
 */
const GATEWAYS = Number(setting("BENCH_GATEWAYS", "2", "2"));
/** "Gateway CPU at ~300 jobs/s": the first throughput level at or above this rate reports its gateway CPU. */
const CPU_REPORT_RATE = 300;
const CPU_REPORT_TOLERANCE = 0.9;
/** Receipts read at once when summing the run's gas. */
const RECEIPT_CONCURRENCY = 32;
const SAMPLES = Number(setting("BENCH_LAG_SAMPLES", "20", "3"));
const LATENCY_MODEL = process.env.BENCH_MODEL ?? "qwen3-1.7b";
const MAX_TOKENS = BENCH_WORKER.outputTokens;
const RECEIVER_PORT = Number(process.env.BENCH_RECEIVER_PORT ?? 8875);
/** Credits of each seeded wallet, in whole stablecoin (100 credits each): far more than a run spends. */
const WALLET_USDG = 2_000n;
/** An open-loop request that receives nothing for this long fails (a saturated gateway must not hold the bench). */
const OPEN_LOOP_IDLE_TIMEOUT_MS = 20_000;
/** An open-loop rate is saturated when more gateway requests than this many seconds of arrivals await a token. */
const OPEN_LOOP_BACKLOG_SECONDS = 0.5;

const began = performance.now();
function progress(message: string): void {
  const seconds = ((performance.now() - began) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${seconds}s] ${message}\n`);
}

/** Requests answered and failed so far in the running level (the ticker prints them). */
type Tally = { done: number; errors: number };

/** Runs `clients` closed loops of `task` until `seconds` have passed; each loop waits for its answer. */
async function closedLoops<T>(
  clients: number,
  seconds: number,
  task: (client: number, round: number) => Promise<T>,
  tally: Tally = { done: 0, errors: 0 },
) {
  const until = performance.now() + seconds * 1000;
  const results: T[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let round = 0; performance.now() < until; round++) {
        try {
          results.push(await task(client, round));
          tally.done++;
        } catch {
          errors++;
          tally.errors++;
        }
      }
    }),
  );
  return { results, errors };
}

/** Every 5 s while a level runs: its elapsed time and the requests answered so far, with the rate. */
function ticker(label: string, seconds: number, tally: Tally): NodeJS.Timeout {
  const start = performance.now();
  return setInterval(() => {
    const elapsed = (performance.now() - start) / 1000;
    progress(
      `${label}: ${Math.min(seconds, elapsed).toFixed(0)}/${seconds} s, ${tally.done} requests ` +
        `(${(tally.done / Math.max(elapsed, 0.001)).toFixed(1)}/s), ${tally.errors} errors`,
    );
  }, 5_000);
}

type LatencyRow = {
  concurrency: number;
  gateway: { ttft: Quantiles; total: Quantiles; errors: number };
  direct: { ttft: Quantiles; total: Quantiles; errors: number };
  added: { ttft: DiffRow; total: DiffRow };
};
type DiffRow = { p50: number | null; p95: number | null; p99: number | null };

function diff(a: Quantiles, b: Quantiles): DiffRow {
  const sub = (x: number | null, y: number | null) => (x === null || y === null ? null : round(x - y));
  return { p50: sub(a.p50, b.p50), p95: sub(a.p95, b.p95), p99: sub(a.p99, b.p99) };
}

type ModeResults = Awaited<ReturnType<typeof measureMode>>;

async function main(): Promise<void> {
  const machine = describeMachine();
  progress(`machine: ${machine.cpus}× ${machine.cpuModel}, ${machine.memoryGb} GB, Node ${machine.node}`);
  const modes: ModeResults[] = [];
  const useRunning = process.env.BENCH_USE_STACK === "1";
  for (const [index, mode] of (useRunning ? ["(running stack)"] : CHAIN_MODES).entries()) {
    const chainBlockTime = mode === "automine" || useRunning ? undefined : Number(mode);
    if (chainBlockTime !== undefined && !(chainBlockTime > 0)) throw new Error(`BENCH_CHAIN_MODES: bad mode ${mode}`);
    progress(`chain mode ${index + 1}: ${chainBlockTime ? `a block every ${chainBlockTime} s` : "automine"}`);
    // Per-statement figures need pg_stat_statements loaded when the stack's server starts.
    if (!useRunning) await preloadStatementStats(BENCH_STATE_DIR, stackPorts(BENCH_PORT_BASE).postgres);
    const stack: BenchStack = await obtainStack(progress, {
      ...(chainBlockTime ? { chainBlockTime } : {}),
      compile: index === 0,
      gateways: GATEWAYS,
    });
    try {
      modes.push(await measureMode(stack));
    } finally {
      if (stack.started) {
        progress("stopping the stack");
        await stack.stop();
      }
    }
  }
  const results = {
    generatedAt: new Date().toISOString(),
    machine,
    source: describeSource(),
    modes,
    durationSeconds: 0,
  };
  results.durationSeconds = round((performance.now() - began) / 1000, 1);
  const dir = path.join(repoRoot, "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  const markdown = renderMarkdown(results);
  writeFileSync(path.join(dir, "latest.md"), markdown);
  process.stdout.write(`\n${markdown}\n`);
  progress(`wrote bench/results/latest.json and latest.md in ${results.durationSeconds} s`);
}

/** Every measure on one stack (one chain mode). */
async function measureMode(stack: BenchStack) {
  const { info } = stack;
  const modeStarted = performance.now();
  const apiKey = info.demo.apiKey;
  const escrow = { chain_id: info.chainId, address: info.contracts.creditEscrow };
  const chain = createPublicClient({ transport: viemHttp(info.rpcUrl) });
  // Every measure but the two-gateway runs goes to the first gateway itself (with two, info.apiUrl is the proxy).
  const gatewayUrls = (info.gateways?.length ? info.gateways : [{ apiUrl: info.apiUrl }]).map((gw) => gw.apiUrl);
  const apiUrl = gatewayUrls[0]!;

  // Processes: each service's whole tree from the stack's process-group leaders (tsx runs a service in a child
  // node process; Postgres serves each connection from a backend under the postmaster); the port's listener where
  // the stack did not say (a running stack's older stack.json).
  const pid = (port: number) => pidOfPort(port);
  const gatewayPids = (info.gateways?.length ? info.gateways : [{ apiUrl: info.apiUrl, pid: undefined }]).map(
    (gateway) => pid(Number(new URL(gateway.apiUrl).port)),
  );
  const gatewayPid = gatewayPids[0];
  const indexerPid = pid(info.ports.indexer);
  const workerPids = info.workers.map((worker) => pid(Number(new URL(worker.endpoint).port)));
  const tree = (root: number | null | undefined, fallback: number | undefined) => () =>
    root ? processTree(root) : fallback ? processTree(fallback) : [];
  const groups: Watched[] = [
    ...gatewayPids.map((listener, i) => ({
      name: gatewayPids.length > 1 ? `gateway ${i}` : "gateway",
      pids: tree(info.gateways?.[i]?.pid, listener),
    })),
    { name: "chain", pids: tree(info.pids?.chain, pid(info.ports.rpc)) },
    { name: "indexer", pids: tree(info.pids?.indexer, indexerPid) },
    { name: "postgres", pids: tree(info.pids?.postgres, pid(info.ports.postgres)) },
    {
      name: "workers",
      pids: () =>
        (info.pids?.workers?.length ? info.pids.workers : workerPids)
          .filter((value): value is number => value !== undefined)
          .flatMap((root) => processTree(root)),
    },
    // The bench process alone: its tree would hold the stack it started.
    { name: "bench", pids: () => [process.pid] },
  ];
  progress(
    `processes: ${groups.map((group) => `${group.name} ${group.pids().length}`).join(", ")} ` +
      `(gateway ${gatewayPids.join("/")}, indexer ${indexerPid})`,
  );
  const commits = await CommitCounter.open(info.databaseUrl);
  // The database's work by statement, table and client process (the bench process is its own client).
  const dbWork = await DbBreakdown.open(
    info.databaseUrl,
    groups.filter((group) => group.name !== "bench"),
  );
  if (!dbWork.statements) progress("pg_stat_statements not loaded: no per-statement figures");
  // When load last stopped: a commit count read before STATS_FLUSH_MS after it may miss some of that load's commits.
  let loadEndedAt = performance.now();
  const settleStats = async () => {
    const wait = loadEndedAt + STATS_FLUSH_MS - performance.now();
    if (wait > 0) await sleep(wait);
  };
  try {
    // Workers hosting the latency model: direct requests alternate between them like the gateway's routing.
    const latencyWorkers = info.workers.filter((worker) => worker.models.includes(LATENCY_MODEL));
    const direct = (round: number, options: TimedOptions & { delivery?: TokenDelivery } = {}) =>
      workerStream(
        latencyWorkers[round % latencyWorkers.length]!.endpoint,
        info.gatewayToken,
        escrow,
        LATENCY_MODEL,
        MAX_TOKENS,
        options,
      );
    const through = (key = apiKey, options: TimedOptions = {}) =>
      gatewayStream(apiUrl, key, LATENCY_MODEL, MAX_TOKENS, options);

    progress(`seeding ${WALLETS} client wallets (credits and an API key each)`);
    const wallets = await seedWallets(info, gatewayUrls, WALLETS, WALLET_USDG);
    const walletKeys = wallets.map((wallet) => wallet.apiKey);

    progress("warm-up: 40 requests each way");
    await closedLoops(4, 3, (_, round) => (round % 2 === 0 ? through() : direct(round)));

    // 1. Added latency (closed loop, one wallet: the demo key), interleaved with direct requests.
    const { latency, memory, gatewayHeap } = await measureClosedLatency(
      apiUrl,
      through,
      direct,
      gatewayPid,
      indexerPid,
      workerPids[0],
    );

    // 2. Open loop: requests arrive at fixed rates, through the gateway (keys of many wallets) and direct.
    const openLoop = await measureOpenLoop(
      async () => {
        // The closed-loop levels before saturate the stack: their answers, settlements and blocks are still being
        // worked through, and a rate measured on top of that backlog measures the backlog.
        const started = performance.now();
        const quiet = await waitUntilQuiet(chain, info.indexerUrl, info.chainBlockTime, apiUrl);
        progress(
          `  ${quiet ? "quiet" : "not quiet"} after ${((performance.now() - started) / 1000).toFixed(0)} s of waiting`,
        );
      },
      (arrival, since) =>
        through(walletKeys[arrival % walletKeys.length]!, { since, timeoutMs: OPEN_LOOP_IDLE_TIMEOUT_MS }),
      (arrival, since) => direct(arrival, { since, timeoutMs: OPEN_LOOP_IDLE_TIMEOUT_MS }),
    );

    // 3. A whole completion at one client: its added total time (on an interval chain: does it wait for a block).
    progress(`whole completion at one client: ${WHOLE_SAMPLES} through the gateway, ${WHOLE_SAMPLES} direct`);
    const wholeRuns = { gateway: [] as number[], direct: [] as number[] };
    for (let i = 0; i < WHOLE_SAMPLES * 2; i++) {
      const result =
        i % 2 === 0
          ? await gatewayComplete(apiUrl, apiKey, LATENCY_MODEL, MAX_TOKENS)
          : await direct(i, { delivery: "whole" });
      if (result.status === 200) (i % 2 === 0 ? wholeRuns.gateway : wholeRuns.direct).push(result.totalMs);
    }
    const wholeCompletion = {
      gateway: quantiles(wholeRuns.gateway),
      direct: quantiles(wholeRuns.direct),
      added: diff(quantiles(wholeRuns.gateway), quantiles(wholeRuns.direct)),
    };
    progress(`  whole completion added p50 ${wholeCompletion.added.p50} ms`);
    loadEndedAt = performance.now();

    // Commits the stack makes with no load (heartbeats, pollers, the indexer's blocks on an interval chain), taken
    // off each level's count. Counters flushed first, so the window holds no earlier load.
    progress(
      `background commits: waiting for the index to catch up and the statistics to settle, then ${BACKGROUND_SECONDS} s quiet`,
    );
    const quiet = await waitUntilQuiet(chain, info.indexerUrl, info.chainBlockTime, apiUrl);
    progress(
      quiet
        ? `  quiet after ${((performance.now() - loadEndedAt) / 1000).toFixed(0)} s`
        : `  not quiet after ${QUIET_WAIT_MS / 1000} s (the index still behind, or transactions still mined): the background figure holds that work`,
    );
    loadEndedAt = performance.now();
    await settleStats();
    const quietFrom = await commits.read();
    const quietWork = await dbWork.start();
    const quietStarted = performance.now();
    await sleep(BACKGROUND_SECONDS * 1000);
    const quietSeconds = (performance.now() - quietStarted) / 1000;
    const backgroundCommitsPerSecond = CommitCounter.between(quietFrom, await commits.read()) / quietSeconds;
    // What the idle stack does, per second (the same breakdown as the levels', over the quiet window).
    const idleWork = await dbWork.finish(quietWork, quietSeconds);
    // Table counters of idle backends publish up to 10 s late: rows per second over the quiet window and the flush.
    await sleep(STATS_FLUSH_MS);
    const idleDb: DbBreakdownResult | null = idleWork
      ? { ...idleWork, tables: await dbWork.tablesSince(quietWork, (performance.now() - quietStarted) / 1000) }
      : null;

    // 4. Throughput over many wallets and every model (all workers), rising concurrency.
    const models = [...new Set(info.workers.flatMap((worker) => worker.models))].sort();
    const throughput: ThroughputRow[] = [];
    const levelIndex = new IndexProbe(info.indexerUrl);
    // Each worker with each of its models, so direct load spreads over the pool as the gateway's routing does.
    const directTargets = info.workers.flatMap((worker) => worker.models.map((model) => ({ worker, model })));
    const throughputFromBlock = (await chain.getBlockNumber()) + 1n;
    let best = 0;
    let flat = 0;
    for (const [level, concurrency] of THROUGHPUT_LEVELS.entries()) {
      progress(
        `throughput level ${level + 1}/${THROUGHPUT_LEVELS.length}: ${concurrency} concurrent clients over ` +
          `${walletKeys.length} wallets for ${THROUGHPUT_SECONDS} s`,
      );
      await settleStats();
      const commitsFrom = await commits.read();
      const levelWork = await dbWork.start();
      const windowStarted = performance.now();
      const run = await settledRun(chain, escrow.address, groups, `throughput ${concurrency}`, {
        concurrency,
        seconds: THROUGHPUT_SECONDS,
        task: (client, round) =>
          gatewayComplete(
            apiUrl,
            walletKeys[client % walletKeys.length]!,
            models[(client + round) % models.length]!,
            MAX_TOKENS,
          ),
        atLevelEnd: async () => {
          // Does the indexer keep up under this load: blocks behind the chain head and seconds behind its time.
          const levelHead = await chain.getBlock();
          const indexed = await levelIndex.indexedBlock().catch(() => undefined);
          return indexed
            ? {
                blocks: Number(levelHead.number) - indexed.number,
                seconds: Number(levelHead.timestamp) - indexed.timestamp,
              }
            : null;
        },
        blockTime: info.chainBlockTime,
        serving: [groups[0]!.name],
      });
      loadEndedAt = performance.now();
      // Statements and backend CPU over the load and its settling (as cpuMsPerJob); tables once flushed, below.
      const levelDb = await dbWork.finish(levelWork, run.settled);
      const directTally: Tally = { done: 0, errors: 0 };
      const directTick = ticker(`direct ${concurrency}`, THROUGHPUT_SECONDS, directTally);
      const directStarted = performance.now();
      const directRun = await closedLoops(
        concurrency,
        THROUGHPUT_SECONDS,
        (client, round) => {
          const target = directTargets[(client + round) % directTargets.length]!;
          // Whole completions, as the gateway asks the workers for them.
          return workerStream(target.worker.endpoint, info.gatewayToken, escrow, target.model, MAX_TOKENS, {
            delivery: "whole",
          });
        },
        directTally,
      );
      clearInterval(directTick);
      const directSeconds = (performance.now() - directStarted) / 1000;
      const directPerSecond = round(
        directRun.results.filter((result) => result.status === 200).length / directSeconds,
        1,
      );
      // The level's commits, once every backend has published them (the direct run does not touch the database);
      // the index probe's one read at the level's end is the bench's, and the stack's idle commits are taken off.
      await settleStats();
      const commitsTo = await commits.read();
      const windowSeconds = (performance.now() - windowStarted) / 1000;
      const levelCommits =
        CommitCounter.between(commitsFrom, commitsTo) - 1 - backgroundCommitsPerSecond * windowSeconds;
      const db: DbBreakdownResult | null = levelDb
        ? { ...levelDb, tables: await dbWork.tablesSince(levelWork, run.settled) }
        : null;
      const row: ThroughputRow = {
        concurrency,
        seconds: round(run.seconds, 1),
        wallets: walletKeys.length,
        completedPerSecond: run.completedPerSecond,
        settledPerSecond: run.settledPerSecond,
        directPerSecond,
        ratioToDirect: directPerSecond > 0 ? round(run.settledPerSecond / directPerSecond, 2) : null,
        errors: run.errors,
        latencyMs: run.latencyMs,
        cpuCores: run.cpuCores,
        cpuMsPerJob: run.cpuMsPerJob,
        dbCommitsPerJob: run.settled > 0 ? round(levelCommits / run.settled, 1) : null,
        db,
        indexBehind: run.atLevelEnd,
      };
      throughput.push(row);
      progress(
        `  ${row.settledPerSecond} settled/s (direct ${row.directPerSecond}/s, ratio ${row.ratioToDirect}), ` +
          `${row.completedPerSecond} completed/s, ${row.errors} errors; index behind by ` +
          `${row.indexBehind ? `${row.indexBehind.blocks} blocks / ${row.indexBehind.seconds} s` : "?"}; ` +
          `${row.dbCommitsPerJob} commits/job; CPU ms/job ` +
          Object.entries(row.cpuMsPerJob)
            .map(([name, value]) => `${name} ${value}`)
            .join(", "),
      );
      // Two levels in a row without a 5% gain end the climb (one slower level alone can be noise on a busy machine).
      flat = row.settledPerSecond < best * 1.05 ? flat + 1 : 0;
      best = Math.max(best, row.settledPerSecond);
      if (flat >= 2) {
        progress("  throughput stopped rising: last level");
        break;
      }
    }
    const throughputToBlock = await chain.getBlockNumber();

    // 5. One wallet against many, with one gateway and with two (clients alternate between the gateways).
    const singleWalletRuns: SingleWalletRun[] = [];
    for (const gateways of gatewayUrls.length > 1 ? [1, 2] : [1])
      for (const spread of ["one", "many"] as const) {
        const urls = gatewayUrls.slice(0, gateways);
        const keys = spread === "one" ? [apiKey] : walletKeys;
        // Each run starts with the index caught up: the first one came right after the throughput levels' thousands
        // of blocks, and measured the indexer's catch-up (one wallet 99.7 against many 131.8, then 138.8 / 141.5 with
        // two gateways, on a run whose previous one had 180.2 / 172.8).
        await waitForIndex(chain, info.indexerUrl, 60_000);
        progress(
          `one wallet vs many: ${SINGLE_WALLET_CLIENTS} clients on ${keys.length} wallet(s), ${gateways} ` +
            `gateway(s), ${SINGLE_WALLET_SECONDS} s`,
        );
        const run = await settledRun(chain, escrow.address, groups, `${spread} wallet(s) ${gateways} gw`, {
          concurrency: SINGLE_WALLET_CLIENTS,
          seconds: SINGLE_WALLET_SECONDS,
          task: (client, round) =>
            gatewayComplete(
              urls[client % urls.length]!,
              keys[client % keys.length]!,
              models[(client + round) % models.length]!,
              MAX_TOKENS,
            ),
          atLevelEnd: async () => null,
          blockTime: info.chainBlockTime,
          serving: groups.slice(0, gateways).map((group) => group.name),
        });
        singleWalletRuns.push({
          gateways,
          wallets: keys.length,
          settledPerSecond: run.settledPerSecond,
          completedPerSecond: run.completedPerSecond,
          errors: run.errors,
        });
        progress(`  ${run.settledPerSecond} settled/s, ${run.errors} errors`);
      }
    loadEndedAt = performance.now();
    const singleWallet = summarizeSingleWallet(singleWalletRuns);

    // 6. Index lag and webhook latency: quiet, one job at a time.
    // The throughput levels mined thousands of blocks: let the indexer catch up first, or its backlog is measured.
    progress("waiting for the indexer to catch up with the chain");
    await waitForIndex(chain, info.indexerUrl, 60_000);
    progress(`index lag and webhook latency: ${SAMPLES} jobs one at a time`);
    const lags = await measureLags(info, apiUrl, apiKey, chain);

    // 7. Gas per job from the throughput levels' own transactions: many wallets, every worker.
    progress("gas: reading the throughput levels' lock and settlement receipts");
    const gas = await measureGas(chain, escrow.address, throughputFromBlock, throughputToBlock);

    const reached = throughput.find((row) => row.settledPerSecond >= CPU_REPORT_RATE * CPU_REPORT_TOLERANCE);
    const gatewayCpuNames = Object.keys(throughput[0]?.cpuCores ?? {}).filter((name) => name.startsWith("gateway"));
    return {
      chain: info.chainBlockTime
        ? `a block every ${info.chainBlockTime} s`
        : stack.started
          ? "automine"
          : "running stack",
      stack: {
        started: stack.started,
        quick: QUICK,
        gateways: gatewayUrls.length,
        wallets: walletKeys.length,
        worker: BENCH_WORKER,
        maxTokens: MAX_TOKENS,
        latencyModel: LATENCY_MODEL,
        latencySeconds: LATENCY_SECONDS,
        throughputSeconds: THROUGHPUT_SECONDS,
        openLoopSeconds: OPEN_LOOP_SECONDS,
        singleWallet: { clients: SINGLE_WALLET_CLIENTS, seconds: SINGLE_WALLET_SECONDS },
        lockMode: process.env.BENCH_LOCK_MODE ?? "submitted (gateway default)",
        gatewayNodeOptions: stack.started ? GATEWAY_NODE_OPTIONS || "(Node defaults)" : "(the running stack's)",
      },
      latency,
      openLoop,
      wholeCompletion,
      wholeCompletionAddedMs: wholeCompletion.added.p50,
      throughput,
      backgroundCommitsPerSecond: round(backgroundCommitsPerSecond, 1),
      idleDbPerSecond: idleDb,
      singleWallet,
      gatewayCpuAt300: reached
        ? {
            settledPerSecond: reached.settledPerSecond,
            cores: round(
              gatewayCpuNames.reduce((sum, name) => sum + (reached.cpuCores[name] ?? 0), 0),
              2,
            ),
          }
        : null,
      gas,
      indexLagMs: lags.indexLag,
      webhookLatencyMs: lags.webhook,
      memoryAt200Streams: memory,
      gatewayHeapAfter200StreamsMb: gatewayHeap,
      durationSeconds: round((performance.now() - modeStarted) / 1000, 1),
    };
  } finally {
    await commits.close();
    await dbWork.close();
  }
}

/**
 * Waits (at most QUIET_WAIT_MS) until the stack has no load left to work through; true when it got there. A stack
 * still settling a load's jobs (a saturated level leaves answers, settlements and finality reads queued for
 * seconds), an index still working through their blocks or webhooks of their events still to deliver is not idle:
 * quiet means the chain saw no transaction for two seconds (automine: no new block; an interval chain: its blocks
 * since are empty), the index caught up (within a block on an interval chain) and the gateway's
 * `gateway_webhook_backlog` (deliveries waiting for an attempt, every gateway's) is 0. After a saturated level on automine the index can be minutes of blocks
 * behind (it indexes ~30 blocks/s, each lock or settlement batch its own block).
 */
async function waitUntilQuiet(
  chain: ReturnType<typeof createPublicClient>,
  indexerUrl: string,
  chainBlockTime: number | null,
  apiUrl: string,
): Promise<boolean> {
  const index = new IndexProbe(indexerUrl);
  let lastBusyAt = performance.now();
  let lastBusyBlock = -1n;
  for (const until = performance.now() + QUIET_WAIT_MS; performance.now() < until; await sleep(250)) {
    const block = await chain.getBlock({ blockTag: "latest" });
    if (block.transactions.length > 0 && block.number !== lastBusyBlock) {
      lastBusyBlock = block.number;
      lastBusyAt = performance.now();
    }
    const indexed = await index.indexedBlock().catch(() => undefined);
    const caughtUp = indexed !== undefined && indexed.number >= Number(block.number) - (chainBlockTime ? 1 : 0);
    if (caughtUp && performance.now() - lastBusyAt >= QUIET_CHAIN_MS && (await webhookBacklog(apiUrl)) === 0)
      return true;
  }
  return false;
}

/** The gateway's `gateway_webhook_backlog`; undefined when /metrics did not answer. */
async function webhookBacklog(apiUrl: string): Promise<number | undefined> {
  const response = await fetch(`${apiUrl}/metrics`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
  if (!response?.ok) return undefined;
  const line = /^gateway_webhook_backlog (\d+)/m.exec(await response.text());
  return line ? Number(line[1]) : undefined;
}

/** How long the chain must see no transaction before the stack counts as idle. */
const QUIET_CHAIN_MS = 2_000;
/** The longest the bench waits for that quiet (and for the index to catch up) before counting anyway. */
const QUIET_WAIT_MS = 240_000;
/** Seconds of quiet over which the stack's background commits are counted. */
const BACKGROUND_SECONDS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (at most `timeoutMs`) until the index has the block that is the chain's head now. */
async function waitForIndex(
  chain: { getBlockNumber: () => Promise<bigint> },
  indexerUrl: string,
  timeoutMs: number,
): Promise<void> {
  const head = Number(await chain.getBlockNumber());
  const reader = new IndexProbe(indexerUrl);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && ((await reader.indexedBlock().catch(() => undefined))?.number ?? 0) < head)
    await sleep(250);
}

type ThroughputRow = {
  concurrency: number;
  seconds: number;
  /** Client wallets the clients are spread over (client i uses wallet i mod n). */
  wallets: number;
  completedPerSecond: number;
  settledPerSecond: number;
  /** The same workers called directly at the same concurrency, right after: whole answers per second. */
  directPerSecond: number;
  /** settled/s ÷ direct/s. */
  ratioToDirect: number | null;
  errors: number;
  latencyMs: Quantiles;
  /** CPU of each process group during the level, in cores (1.0 = one core busy). */
  cpuCores: Record<string, number>;
  /** CPU milliseconds per settled job of each part of the stack, from the level's start until its jobs settled. */
  cpuMsPerJob: CpuMsPerJob;
  /** PostgreSQL commits (every process of the stack) per settled job, background and the bench's reads taken off. */
  dbCommitsPerJob: number | null;
  /**
   * PostgreSQL's work per settled job by statement (from the level's start until its jobs settled), by table (rows
   * written until the statistics flushed after the direct run: idle work of ~20 s included) and by client process.
   */
  db: DbBreakdownResult | null;
  /** At the level's end: how far the index is behind the chain head (null: the index did not answer). */
  indexBehind: { blocks: number; seconds: number } | null;
};

type CpuMsPerJob = {
  /** The gateway process(es) the run's clients sent to. */
  gateway: number | null;
  /** The stack's other gateway processes, idle in the run (heartbeats, pollers): not in `gateway`. */
  idleGateways: number | null;
  postgres: number | null;
  indexer: number | null;
  chain: number | null;
  workers: number | null;
  bench: number | null;
};

type SingleWalletRun = {
  gateways: number;
  wallets: number;
  settledPerSecond: number;
  completedPerSecond: number;
  errors: number;
};

/**
 * `oneWalletPerSecond` / `manyWalletsPerSecond`: settled jobs/s of the same clients on one wallet and spread over
 * many, with one gateway (the headline figures) and with two (`twoGateways`, null with a one-gateway stack).
 */
function summarizeSingleWallet(runs: SingleWalletRun[]) {
  const pick = (gateways: number) => {
    const one = runs.find((run) => run.gateways === gateways && run.wallets === 1);
    const many = runs.find((run) => run.gateways === gateways && run.wallets > 1);
    if (!one || !many) return null;
    return {
      oneWalletPerSecond: one.settledPerSecond,
      manyWalletsPerSecond: many.settledPerSecond,
      ratio: many.settledPerSecond > 0 ? round(one.settledPerSecond / many.settledPerSecond, 2) : null,
    };
  };
  const oneGateway = pick(1);
  return {
    clients: SINGLE_WALLET_CLIENTS,
    oneWalletPerSecond: oneGateway?.oneWalletPerSecond ?? null,
    manyWalletsPerSecond: oneGateway?.manyWalletsPerSecond ?? null,
    ratio: oneGateway?.ratio ?? null,
    twoGateways: pick(2),
    runs,
  };
}

/**
 * A closed-loop run of whole completions and what it settled: `JobSettled` events mined from its first block until
 * its jobs have landed (batched; a block later on an interval chain), over the run's own duration; CPU per process
 * in cores over the run and in milliseconds per settled job over the run and its settling.
 */
async function settledRun<T>(
  chain: Chain,
  escrow: Hex,
  groups: Watched[],
  label: string,
  run: {
    concurrency: number;
    seconds: number;
    task: (client: number, round: number) => Promise<Timed>;
    atLevelEnd: () => Promise<T>;
    /** Names of the CPU groups of the gateways the clients send to. */
    serving: string[];
    /** Seconds between blocks (null: automine). */
    blockTime: number | null;
  },
) {
  const fromBlock = (await chain.getBlockNumber()) + 1n;
  const meter = cpuMeter(groups);
  const tally: Tally = { done: 0, errors: 0 };
  const tick = ticker(label, run.seconds, tally);
  const started = performance.now();
  const { results, errors } = await closedLoops(run.concurrency, run.seconds, run.task, tally);
  const seconds = (performance.now() - started) / 1000;
  const cores = meter.cores();
  clearInterval(tick);
  const atLevelEnd = await run.atLevelEnd();
  const ok = results.filter((result) => result.status === 200);
  await sleep(1_500 + (run.blockTime ?? 0) * 1000);
  const cpuSecondsUsed = meter.seconds();
  const settled = await countSettled(chain, escrow, fromBlock, await chain.getBlockNumber());
  const settledPerSecond = round(settled / seconds, 1);
  const msPerJob = (names: string[]) =>
    settled > 0 ? round((names.reduce((sum, name) => sum + (cpuSecondsUsed[name] ?? 0), 0) * 1000) / settled, 2) : null;
  const names = Object.keys(cpuSecondsUsed);
  return {
    seconds,
    settled,
    settledPerSecond,
    completedPerSecond: round(ok.length / seconds, 1),
    errors: errors + (results.length - ok.length),
    latencyMs: quantiles(ok.map((result) => result.totalMs)),
    cpuCores: Object.fromEntries(Object.entries(cores).map(([name, value]) => [name, round(value, 2)])),
    cpuMsPerJob: {
      gateway: msPerJob(names.filter((name) => name.startsWith("gateway") && run.serving.includes(name))),
      idleGateways: msPerJob(names.filter((name) => name.startsWith("gateway") && !run.serving.includes(name))),
      postgres: msPerJob(["postgres"]),
      indexer: msPerJob(["indexer"]),
      chain: msPerJob(["chain"]),
      workers: msPerJob(["workers"]),
      bench: msPerJob(["bench"]),
    } satisfies CpuMsPerJob,
    atLevelEnd,
  };
}

/** Closed-loop streams at each of LATENCY_LEVELS, gateway and direct interleaved; memory at the highest level. */
async function measureClosedLatency(
  apiUrl: string,
  through: () => Promise<Timed>,
  direct: (round: number) => Promise<Timed>,
  gatewayPid: number | undefined,
  indexerPid: number | undefined,
  workerPid: number | undefined,
) {
  const latency: LatencyRow[] = [];
  let memory: Record<string, { sampledPeakMb: number; vmHwmMb: number }> = {};
  let gatewayHeap: Record<string, number> = {};
  for (const [level, concurrency] of LATENCY_LEVELS.entries()) {
    progress(
      `latency level ${level + 1}/${LATENCY_LEVELS.length}: ${concurrency} concurrent streams for ` +
        `${LATENCY_SECONDS} s (half through the gateway)`,
    );
    const samplers: { name: string; pid: number | undefined }[] = [
      { name: "gateway", pid: gatewayPid },
      { name: "indexer", pid: indexerPid },
      { name: "worker", pid: workerPid },
    ];
    const peaks = new Map<string, number>();
    const sampler = setInterval(() => {
      for (const { name, pid: sampled } of samplers) {
        const now = sampled ? memoryMb(sampled) : undefined;
        if (now) peaks.set(name, Math.max(peaks.get(name) ?? 0, now.rssMb));
      }
    }, 200);
    const tally: Tally = { done: 0, errors: 0 };
    const tick = ticker(`latency ${concurrency}`, LATENCY_SECONDS, tally);
    const gatewayRuns: Timed[] = [];
    const directRuns: Timed[] = [];
    let gatewayErrors = 0;
    let directErrors = 0;
    await closedLoops(
      concurrency,
      LATENCY_SECONDS,
      async (client, round) => {
        const viaGateway = (client + round) % 2 === 0;
        const result = viaGateway ? await through() : await direct(client + round);
        const ok = result.status === 200 && result.ttftMs !== undefined;
        if (viaGateway) {
          if (ok) gatewayRuns.push(result);
          else gatewayErrors++;
        } else if (ok) directRuns.push(result);
        else directErrors++;
      },
      tally,
    );
    clearInterval(tick);
    clearInterval(sampler);
    if (concurrency === Math.max(...LATENCY_LEVELS)) gatewayHeap = await heapOf(apiUrl);
    const gw = {
      ttft: quantiles(gatewayRuns.map((r) => r.ttftMs!)),
      total: quantiles(gatewayRuns.map((r) => r.totalMs)),
    };
    const dr = {
      ttft: quantiles(directRuns.map((r) => r.ttftMs!)),
      total: quantiles(directRuns.map((r) => r.totalMs)),
    };
    latency.push({
      concurrency,
      gateway: { ...gw, errors: gatewayErrors },
      direct: { ...dr, errors: directErrors },
      added: { ttft: diff(gw.ttft, dr.ttft), total: diff(gw.total, dr.total) },
    });
    progress(
      `  added TTFT p50 ${latency.at(-1)!.added.ttft.p50} ms, p99 ${latency.at(-1)!.added.ttft.p99} ms ` +
        `(gateway ${gatewayRuns.length} ok / ${gatewayErrors} errors, direct ${directRuns.length} ok)`,
    );
    if (concurrency === Math.max(...LATENCY_LEVELS)) {
      memory = Object.fromEntries(
        samplers.map(({ name, pid: sampled }) => [
          name,
          {
            sampledPeakMb: round(peaks.get(name) ?? 0, 1),
            vmHwmMb: round((sampled ? memoryMb(sampled)?.peakMb : undefined) ?? 0, 1),
          },
        ]),
      );
    }
  }
  return { latency, memory, gatewayHeap };
}

type OpenLoopRow = {
  /** Gateway requests arriving per second (as many direct ones arrive in between). */
  rate: number;
  seconds: number;
  /** Arrivals not sent because too many gateway requests were already waiting (the level was cut short). */
  /** `errorKinds`: the failed requests by status and error code (`errorKind`). */
  gateway: { ttft: Quantiles; total: Quantiles; errors: number; errorKinds: Record<string, number>; unsent: number };
  direct: { ttft: Quantiles; total: Quantiles; errors: number };
  added: { ttft: DiffRow; total: DiffRow };
  /** The gateway fell behind the arrivals (a backlog of more than OPEN_LOOP_BACKLOG_SECONDS of them): its figures
   *  measure queueing, and higher rates are skipped. */
  saturated: boolean;
};

/**
 * Open loop: at each rate of OPEN_LOOP_RATES, gateway requests arrive on a fixed schedule whatever the answers do
 * (half a period apart, direct requests to the same workers on the same schedule); TTFT and total count from each
 * request's scheduled arrival, so a client-side delay is not hidden (no coordinated omission). Rates above the first
 * saturated one are skipped.
 */
async function measureOpenLoop(
  beforeRate: () => Promise<void>,
  through: (arrival: number, since: number) => Promise<Timed>,
  direct: (arrival: number, since: number) => Promise<Timed>,
): Promise<(OpenLoopRow | { rate: number; skipped: string })[]> {
  const rows: (OpenLoopRow | { rate: number; skipped: string })[] = [];
  let saturatedAt: number | undefined;
  for (const rate of OPEN_LOOP_RATES) {
    if (saturatedAt !== undefined) {
      rows.push({ rate, skipped: `saturated at ${saturatedAt}/s` });
      continue;
    }
    await beforeRate();
    progress(`open loop: ${rate} gateway requests/s (and ${rate} direct) for ${OPEN_LOOP_SECONDS} s`);
    const arrivals = Math.round(rate * OPEN_LOOP_SECONDS);
    const maxWaiting = Math.max(10, Math.ceil(rate * OPEN_LOOP_BACKLOG_SECONDS * 4));
    const gatewayRuns: Timed[] = [];
    const directRuns: Timed[] = [];
    let gatewayErrors = 0;
    const gatewayErrorKinds: string[] = [];
    let directErrors = 0;
    let unsent = 0;
    let waiting = 0;
    let peakWaiting = 0;
    const pending: Promise<void>[] = [];
    const start = performance.now() + 20;
    const period = 1000 / rate;
    // Sends every arrival whose time has come (timers are coarse: a tick may release several).
    let next = 0;
    await new Promise<void>((resolve) => {
      const pump = () => {
        const now = performance.now();
        for (; next < arrivals && start + next * period <= now; next++) {
          const arrival = next;
          const since = start + arrival * period;
          if (waiting >= maxWaiting) {
            unsent++;
          } else {
            waiting++;
            peakWaiting = Math.max(peakWaiting, waiting);
            pending.push(
              through(arrival, since).then(
                (result) => {
                  waiting--;
                  if (result.status === 200 && result.ttftMs !== undefined) gatewayRuns.push(result);
                  else {
                    gatewayErrors++;
                    gatewayErrorKinds.push(errorKind(result));
                  }
                },
                (error: unknown) => {
                  waiting--;
                  gatewayErrors++;
                  gatewayErrorKinds.push(errorKind(error instanceof Error ? error : new Error(String(error))));
                },
              ),
            );
          }
          const directSince = since + period / 2;
          pending.push(
            sleep(Math.max(0, directSince - performance.now())).then(() =>
              direct(arrival, directSince).then(
                (result) => {
                  if (result.status === 200 && result.ttftMs !== undefined) directRuns.push(result);
                  else directErrors++;
                },
                () => {
                  directErrors++;
                },
              ),
            ),
          );
        }
        if (next >= arrivals) resolve();
        else setTimeout(pump, Math.max(0, Math.min(period, start + next * period - performance.now())));
      };
      pump();
    });
    // Requests still awaiting an answer when the arrivals end: more than a backlog's worth means the gateway fell
    // behind.
    const backlog = waiting;
    await Promise.all(pending);
    const saturated = backlog > rate * OPEN_LOOP_BACKLOG_SECONDS || unsent > 0 || gatewayErrors > arrivals * 0.01;
    const gw = {
      ttft: quantiles(gatewayRuns.map((r) => r.ttftMs!)),
      total: quantiles(gatewayRuns.map((r) => r.totalMs)),
    };
    const dr = {
      ttft: quantiles(directRuns.map((r) => r.ttftMs!)),
      total: quantiles(directRuns.map((r) => r.totalMs)),
    };
    const row: OpenLoopRow = {
      rate,
      seconds: OPEN_LOOP_SECONDS,
      gateway: { ...gw, errors: gatewayErrors, errorKinds: countKinds(gatewayErrorKinds), unsent },
      direct: { ...dr, errors: directErrors },
      added: { ttft: diff(gw.ttft, dr.ttft), total: diff(gw.total, dr.total) },
      saturated,
    };
    rows.push(row);
    progress(
      `  added TTFT p50 ${row.added.ttft.p50} ms, p99 ${row.added.ttft.p99} ms (gateway ${gatewayRuns.length} ok / ` +
        `${gatewayErrors} errors / ${unsent} unsent, peak ${peakWaiting} waiting${saturated ? ", saturated" : ""})` +
        (gatewayErrors > 0 ? `; errors: ${JSON.stringify(row.gateway.errorKinds)}` : ""),
    );
    if (saturated) saturatedAt = rate;
  }
  return rows;
}

type Chain = ReturnType<typeof createPublicClient>;

/** The gateway's V8 heap and external memory from its own /metrics (where its RSS goes). */
async function heapOf(apiUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text().catch(() => "");
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)$`, "m").exec(text)?.[1] ?? NaN);
  const mb = (bytes: number) => round(bytes / 1024 ** 2, 1);
  return {
    rss: mb(value("process_resident_memory_bytes")),
    heapTotal: mb(value("nodejs_heap_size_total_bytes")),
    heapUsed: mb(value("nodejs_heap_size_used_bytes")),
    external: mb(value("nodejs_external_memory_bytes")),
  };
}

/**
 * Blocks per `eth_getLogs` call: a whole run's logs in one answer exceed viem's 10 MB response limit, and so did
 * 100 blocks of a 1 s chain under load (each job logs its lock, settlement and transfers; a block holds a hundred jobs).
 */
const LOG_PAGE_BLOCKS = 10n;

async function escrowLogs(chain: Chain, escrow: Hex, fromBlock: bigint, toBlock: bigint) {
  const pages = [];
  for (let from = fromBlock; from <= toBlock; from += LOG_PAGE_BLOCKS) {
    const to = from + LOG_PAGE_BLOCKS - 1n < toBlock ? from + LOG_PAGE_BLOCKS - 1n : toBlock;
    pages.push(await chain.getLogs({ address: escrow, fromBlock: from, toBlock: to }));
  }
  return pages.flat();
}

async function countSettled(chain: Chain, escrow: Hex, fromBlock: bigint, toBlock: bigint): Promise<number> {
  if (toBlock < fromBlock) return 0;
  const logs = await escrowLogs(chain, escrow, fromBlock, toBlock);
  return parseEventLogs({ abi: creditEscrowAbi, logs, eventName: "JobSettled" }).length;
}

/**
 * Lock + settle gas per job from the throughput levels' transactions (traffic over many wallets and every worker, as
 * real traffic is): every transaction that emitted `JobOpened` (openJob / openJobBatch / openAndSettleBatch) or
 * `JobSettled` (settle / settleBatch / openAndSettleBatch) on the escrow in those blocks, its `gasUsed` summed once
 * and divided by the jobs locked and settled (their mean), with how many distinct wallets and workers those jobs had.
 * `lockPerJob` and `settlePerJob` are those of the transactions that only lock or only settle; a transaction that does
 * both (settlements riding with locks, docs/DESIGN.md) counts in `ridingTransactions`. Fail and refund transactions
 * are not counted.
 */
async function measureGas(chain: Chain, escrow: Hex, fromBlock: bigint, toBlock: bigint) {
  const logs = await escrowLogs(chain, escrow, fromBlock, toBlock);
  const opened = parseEventLogs({ abi: creditEscrowAbi, logs, eventName: "JobOpened" });
  const settled = parseEventLogs({ abi: creditEscrowAbi, logs, eventName: "JobSettled" });
  const lockTxs = new Set(opened.map((log) => log.transactionHash));
  const settleTxs = new Set(settled.map((log) => log.transactionHash));
  const riding = [...lockTxs].filter((hash) => settleTxs.has(hash));
  const lockOnly = [...lockTxs].filter((hash) => !settleTxs.has(hash));
  const settleOnly = [...settleTxs].filter((hash) => !lockTxs.has(hash));
  const gasUsed = new Map<Hex, bigint>();
  const queue = [...new Set([...lockTxs, ...settleTxs])];
  await Promise.all(
    Array.from({ length: RECEIPT_CONCURRENCY }, async () => {
      for (let hash = queue.pop(); hash; hash = queue.pop())
        gasUsed.set(hash, (await chain.getTransactionReceipt({ hash })).gasUsed);
    }),
  );
  const sum = (hashes: Iterable<Hex>) => [...hashes].reduce((total, hash) => total + (gasUsed.get(hash) ?? 0n), 0n);
  const perJob = (gas: bigint, jobs: number) => (jobs > 0 ? Number(gas / BigInt(jobs)) : null);
  const lockOnlySet = new Set(lockOnly);
  const settleOnlySet = new Set(settleOnly);
  const jobs = opened.length + settled.length;
  return {
    lockPerJob: perJob(sum(lockOnly), opened.filter((log) => lockOnlySet.has(log.transactionHash)).length),
    settlePerJob: perJob(sum(settleOnly), settled.filter((log) => settleOnlySet.has(log.transactionHash)).length),
    // Every transaction once, over the mean of jobs locked and jobs settled.
    lockPlusSettlePerJob: jobs > 0 ? Number((sum(gasUsed.keys()) * 2n) / BigInt(jobs)) : null,
    jobsLocked: opened.length,
    jobsSettled: settled.length,
    distinctWallets: new Set(opened.map((log) => (log.args as { wallet?: string }).wallet)).size,
    distinctWorkers: new Set(settled.map((log) => (log.args as { worker?: string }).worker)).size,
    lockTransactions: lockTxs.size,
    settleTransactions: settleTxs.size,
    ridingTransactions: riding.length,
    meanLockBatch: lockTxs.size ? round(opened.length / lockTxs.size, 1) : null,
    meanSettleBatch: settleTxs.size ? round(settled.length / settleTxs.size, 1) : null,
  };
}

/**
 * One job at a time: the moment its settlement is first seen mined (receipt polled every 5 ms) → the row with
 * the settlement readable through @ponder/client (what the API reads), and → the first delivery attempt of its
 * `job.completed` webhook (attempt records in Postgres).
 */
async function measureLags(info: BenchStack["info"], apiUrl: string, apiKey: string, chain: Chain) {
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  await new Promise<void>((resolve) => receiver.listen(RECEIVER_PORT, "127.0.0.1", resolve));
  const pool = new pg.Pool({ connectionString: info.databaseUrl, max: 2, options: `-c search_path="api",public` });
  const index = new IndexProbe(info.indexerUrl);
  const indexLag: number[] = [];
  const webhook: number[] = [];
  try {
    const created = await fetch(`${apiUrl}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `http://127.0.0.1:${RECEIVER_PORT}/hook`, events: ["job.completed"] }),
    });
    const hook = (await created.json()) as { id?: string };
    for (let i = 0; i < SAMPLES; i++) {
      const result = await gatewayComplete(apiUrl, apiKey, LATENCY_MODEL, MAX_TOKENS);
      const settlementTx = result.headers["x-service-settlement-tx"];
      const jobId = result.headers["x-service-job-id"];
      if (result.status !== 200 || typeof settlementTx !== "string" || typeof jobId !== "string") continue;
      let minedAt = 0;
      for (;;) {
        const receipt = await chain.getTransactionReceipt({ hash: settlementTx as Hex }).catch(() => undefined);
        if (receipt) {
          minedAt = Date.now();
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const deadline = Date.now() + 10_000;
      let indexedAt: number | undefined;
      let attemptAt: number | undefined;
      while (Date.now() < deadline && (indexedAt === undefined || (hook.id && attemptAt === undefined))) {
        if (indexedAt === undefined) {
          const row = await index.jobById(jobId).catch(() => undefined);
          if (row?.settlementTx) indexedAt = Date.now();
        }
        if (hook.id && attemptAt === undefined) {
          const { rows } = await pool.query<{ started_at: Date }>(
            `SELECT a.started_at FROM webhook_attempt a JOIN webhook_delivery d ON d.id = a.delivery_id
             JOIN webhook_event e ON e.id = d.event_id
             WHERE a.attempt_number = 1 AND e.event = 'job.completed' AND e.body::jsonb -> 'data' ->> 'job_id' = $1`,
            [jobId],
          );
          if (rows[0]) attemptAt = rows[0].started_at.getTime();
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (indexedAt !== undefined) indexLag.push(indexedAt - minedAt);
      if (attemptAt !== undefined) webhook.push(attemptAt - minedAt);
    }
    if (hook.id) {
      await fetch(`${apiUrl}/v1/webhooks/${hook.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${apiKey}` },
      });
    }
  } finally {
    await pool.end();
    receiver.close();
  }
  return { indexLag: quantiles(indexLag), webhook: quantiles(webhook) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
