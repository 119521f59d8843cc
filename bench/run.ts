import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import pg from "pg";
import { createPublicClient, http as viemHttp, parseEventLogs, type Hex } from "viem";
import { creditEscrowAbi } from "@credit-metered/client";
import { IndexProbe } from "./indexProbe.js";
import { repoRoot } from "../scripts/stack/repoRoot.js";
import { gatewayComplete, gatewayStream, workerStream, type Timed } from "./clients.js";
import { describeMachine } from "./machine.js";
import { BENCH_WORKER, GATEWAY_NODE_OPTIONS, obtainStack, type BenchStack } from "./obtainStack.js";
import { childrenOf, cpuMeter, memoryMb, pidOfPort, type Watched } from "./procStats.js";
import { renderMarkdown } from "./renderMarkdown.js";
import { quantiles, round, type Quantiles } from "./stats.js";

/**
 * `npm run bench`: measures the gateway against the same simulated workers, on a real local stack, once per chain
 * mode (automine, then a block every second: BENCH_CHAIN_MODES). Asserts nothing; writes bench/results/latest.json
 * and latest.md. Durations are env-tunable (BENCH_*); the defaults keep the whole run near ten minutes on a 2-core
 * machine (two stacks started, about four minutes of measuring each).
 */

const LATENCY_LEVELS = (process.env.BENCH_LATENCY_LEVELS ?? "1,50,200").split(",").map(Number);
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 8);
const THROUGHPUT_LEVELS = (process.env.BENCH_THROUGHPUT_LEVELS ?? "25,50,100,200").split(",").map(Number);
const THROUGHPUT_SECONDS = Number(process.env.BENCH_THROUGHPUT_SECONDS ?? 10);
/** Chain modes measured in turn: `automine` or seconds between blocks. */
const CHAIN_MODES = (process.env.BENCH_CHAIN_MODES ?? "automine,1").split(",").map((mode) => mode.trim());
/** Gateway processes of the bench stack (more than one: behind the stack's proxy, run inside this process). */
const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 1);
/** "Gateway CPU at ~300 jobs/s": the first throughput level at or above this rate reports its gateway CPU. */
const CPU_REPORT_RATE = 300;
const CPU_REPORT_TOLERANCE = 0.9;
/** Receipts read at once when summing the run's gas. */
const RECEIPT_CONCURRENCY = 32;
const SAMPLES = Number(process.env.BENCH_LAG_SAMPLES ?? 20);
const LATENCY_MODEL = process.env.BENCH_MODEL ?? "qwen3-1.7b";
const MAX_TOKENS = BENCH_WORKER.outputTokens;
const RECEIVER_PORT = Number(process.env.BENCH_RECEIVER_PORT ?? 8875);

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
  const results = { generatedAt: new Date().toISOString(), machine, modes, durationSeconds: 0 };
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
  {
    const apiKey = info.demo.apiKey;
    const escrow = { chain_id: info.chainId, address: info.contracts.creditEscrow };
    const chain = createPublicClient({ transport: viemHttp(info.rpcUrl) });
    const firstBlock = await chain.getBlockNumber();

    // Processes by the port they listen on (tsx runs the service in a child node process: that is the one found).
    const pid = (port: number) => pidOfPort(port);
    const gatewayPids = (info.gateways ?? [{ apiUrl: info.apiUrl }]).map((gateway) =>
      pid(Number(new URL(gateway.apiUrl).port)),
    );
    const gatewayPid = gatewayPids[0];
    const indexerPid = pid(info.ports.indexer);
    const workerPids = info.workers.map((worker) => pid(Number(new URL(worker.endpoint).port)));
    const chainPid = pid(info.ports.rpc);
    const postgresPid = pid(info.ports.postgres);
    const single =
      (value: number | undefined): Watched["pids"] =>
      () =>
        value ? [value] : [];
    const groups: Watched[] = [
      ...gatewayPids.map((value, i) => ({
        name: gatewayPids.length > 1 ? `gateway ${i}` : "gateway",
        pids: single(value),
      })),
      { name: "chain (Hardhat node)", pids: single(chainPid) },
      { name: "indexer (Ponder)", pids: single(indexerPid) },
      { name: "postgres", pids: () => (postgresPid ? [postgresPid, ...childrenOf(postgresPid)] : []) },
      { name: "workers (all)", pids: () => workerPids.filter((value): value is number => value !== undefined) },
      { name: "bench client", pids: () => [process.pid] },
    ];
    progress(
      `pids: gateway ${gatewayPids.join("/")}, indexer ${indexerPid}, chain ${chainPid}, postgres ${postgresPid}`,
    );

    // Workers hosting the latency model: direct requests alternate between them like the gateway's routing.
    const latencyWorkers = info.workers.filter((worker) => worker.models.includes(LATENCY_MODEL));
    const direct = (round: number) =>
      workerStream(
        latencyWorkers[round % latencyWorkers.length]!.endpoint,
        info.gatewayToken,
        escrow,
        LATENCY_MODEL,
        MAX_TOKENS,
      );
    const through = () => gatewayStream(info.apiUrl, apiKey, LATENCY_MODEL, MAX_TOKENS);

    progress("warm-up: 40 requests each way");
    await closedLoops(4, 3, (_, round) => (round % 2 === 0 ? through() : direct(round)));

    // 1. Added latency: gateway and direct requests interleaved in the same loops, at each concurrency.
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
        { name: "worker", pid: workerPids[0] },
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
      if (concurrency === Math.max(...LATENCY_LEVELS)) gatewayHeap = await heapOf(info.apiUrl);
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

    // 2. Throughput: whole completions over every model (all workers), rising concurrency, settled jobs/s.
    const models = [...new Set(info.workers.flatMap((worker) => worker.models))].sort();
    const throughput: {
      concurrency: number;
      seconds: number;
      completedPerSecond: number;
      settledPerSecond: number;
      /** The same workers called directly at the same concurrency, right after: whole answers per second. */
      directPerSecond: number;
      /** settled/s ÷ direct/s. */
      ratioToDirect: number | null;
      errors: number;
      latencyMs: Quantiles;
      cpuCores: Record<string, number>;
      /** At the level's end: how far the index is behind the chain head (null: the index did not answer). */
      indexBehind: { blocks: number; seconds: number } | null;
    }[] = [];
    const levelIndex = new IndexProbe(info.indexerUrl);
    // Each worker with each of its models, so direct load spreads over the pool as the gateway's routing does.
    const directTargets = info.workers.flatMap((worker) => worker.models.map((model) => ({ worker, model })));
    let best = 0;
    let flat = 0;
    for (const [level, concurrency] of THROUGHPUT_LEVELS.entries()) {
      progress(
        `throughput level ${level + 1}/${THROUGHPUT_LEVELS.length}: ${concurrency} concurrent clients for ` +
          `${THROUGHPUT_SECONDS} s`,
      );
      const fromBlock = (await chain.getBlockNumber()) + 1n;
      const meter = cpuMeter(groups);
      const tally: Tally = { done: 0, errors: 0 };
      const tick = ticker(`throughput ${concurrency}`, THROUGHPUT_SECONDS, tally);
      const started = performance.now();
      const { results, errors } = await closedLoops(
        concurrency,
        THROUGHPUT_SECONDS,
        (client, round) => gatewayComplete(info.apiUrl, apiKey, models[(client + round) % models.length]!, MAX_TOKENS),
        tally,
      );
      const seconds = (performance.now() - started) / 1000;
      const cpuCores = meter();
      // Does the indexer keep up under this load: blocks behind the chain head and seconds behind its time.
      const levelHead = await chain.getBlock();
      const indexed = await levelIndex.indexedBlock().catch(() => undefined);
      const indexBehind = indexed
        ? {
            blocks: Number(levelHead.number) - indexed.number,
            seconds: Number(levelHead.timestamp) - indexed.timestamp,
          }
        : null;
      clearInterval(tick);
      const ok = results.filter((result) => result.status === 200);
      // This level's settlements land (batched; a block later on an interval-mining chain) before they are counted
      // and before the direct run takes the workers; the rate is still over the level's own duration.
      await new Promise((resolve) => setTimeout(resolve, 1_500 + (info.chainBlockTime ?? 0) * 1000));
      const toBlock = await chain.getBlockNumber();
      const settled = await countSettled(chain, escrow.address, fromBlock, toBlock);
      const directTally: Tally = { done: 0, errors: 0 };
      const directTick = ticker(`direct ${concurrency}`, THROUGHPUT_SECONDS, directTally);
      const directStarted = performance.now();
      const directRun = await closedLoops(
        concurrency,
        THROUGHPUT_SECONDS,
        (client, round) => {
          const target = directTargets[(client + round) % directTargets.length]!;
          return workerStream(target.worker.endpoint, info.gatewayToken, escrow, target.model, MAX_TOKENS);
        },
        directTally,
      );
      clearInterval(directTick);
      const directSeconds = (performance.now() - directStarted) / 1000;
      const directPerSecond = round(
        directRun.results.filter((result) => result.status === 200).length / directSeconds,
        1,
      );
      const settledPerSecond = round(settled / seconds, 1);
      const row = {
        concurrency,
        seconds: round(seconds, 1),
        completedPerSecond: round(ok.length / seconds, 1),
        settledPerSecond,
        directPerSecond,
        ratioToDirect: directPerSecond > 0 ? round(settledPerSecond / directPerSecond, 2) : null,
        errors: errors + (results.length - ok.length),
        latencyMs: quantiles(ok.map((result) => result.totalMs)),
        cpuCores: Object.fromEntries(Object.entries(cpuCores).map(([name, value]) => [name, round(value, 2)])),
        indexBehind,
      };
      throughput.push(row);
      progress(
        `  ${row.settledPerSecond} settled/s (direct ${row.directPerSecond}/s, ratio ${row.ratioToDirect}), ` +
          `${row.completedPerSecond} completed/s, ${row.errors} errors; index behind by ` +
          `${row.indexBehind ? `${row.indexBehind.blocks} blocks / ${row.indexBehind.seconds} s` : "?"}; CPU ` +
          Object.entries(row.cpuCores)
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

    // 3. Index lag and webhook latency: quiet, one job at a time.
    // The throughput levels mined thousands of blocks: let the indexer catch up first, or its backlog is measured.
    progress("waiting for the indexer to catch up with the chain");
    const head = Number(await chain.getBlockNumber());
    const reader = new IndexProbe(info.indexerUrl);
    const catchUpUntil = Date.now() + 60_000;
    while (Date.now() < catchUpUntil && ((await reader.indexedBlock().catch(() => undefined))?.number ?? 0) < head)
      await new Promise((resolve) => setTimeout(resolve, 250));
    progress(`index lag and webhook latency: ${SAMPLES} jobs one at a time`);
    const lags = await measureLags(info, apiKey, chain);

    // 4. Gas per job from the run's own transactions.
    progress("gas: reading the run's lock and settlement receipts");
    const gas = await measureGas(chain, escrow.address, firstBlock + 1n, await chain.getBlockNumber());

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
        gateways: info.gateways?.length ?? 1,
        worker: BENCH_WORKER,
        maxTokens: MAX_TOKENS,
        latencyModel: LATENCY_MODEL,
        latencySeconds: LATENCY_SECONDS,
        throughputSeconds: THROUGHPUT_SECONDS,
        lockMode: process.env.BENCH_LOCK_MODE ?? "submitted (gateway default)",
        gatewayNodeOptions: stack.started ? GATEWAY_NODE_OPTIONS || "(Node defaults)" : "(the running stack's)",
      },
      latency,
      throughput,
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
  }
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

/** Blocks per `eth_getLogs` call: a whole run's logs in one answer exceed viem's response size limit. */
const LOG_PAGE_BLOCKS = 1_000n;

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
 * Lock + settle gas per job from the run's own transactions: every transaction that emitted `JobOpened`
 * (openJob / openJobBatch) or `JobSettled` (settle / settleBatch) on the escrow in the run, its `gasUsed` summed and
 * divided by the jobs it locked or settled. Fail and refund transactions are not counted (jobs that did not settle).
 */
async function measureGas(chain: Chain, escrow: Hex, fromBlock: bigint, toBlock: bigint) {
  const logs = await escrowLogs(chain, escrow, fromBlock, toBlock);
  const opened = parseEventLogs({ abi: creditEscrowAbi, logs, eventName: "JobOpened" });
  const settled = parseEventLogs({ abi: creditEscrowAbi, logs, eventName: "JobSettled" });
  const lockTxs = [...new Set(opened.map((log) => log.transactionHash))];
  const settleTxs = [...new Set(settled.map((log) => log.transactionHash))];
  const gasUsed = new Map<Hex, bigint>();
  const queue = [...new Set([...lockTxs, ...settleTxs])];
  await Promise.all(
    Array.from({ length: RECEIPT_CONCURRENCY }, async () => {
      for (let hash = queue.pop(); hash; hash = queue.pop())
        gasUsed.set(hash, (await chain.getTransactionReceipt({ hash })).gasUsed);
    }),
  );
  const sum = (hashes: Hex[]) => hashes.reduce((total, hash) => total + (gasUsed.get(hash) ?? 0n), 0n);
  const perJob = (gas: bigint, jobs: number) => (jobs > 0 ? Number(gas / BigInt(jobs)) : null);
  const lockPerJob = perJob(sum(lockTxs), opened.length);
  const settlePerJob = perJob(sum(settleTxs), settled.length);
  return {
    lockPerJob,
    settlePerJob,
    lockPlusSettlePerJob: lockPerJob !== null && settlePerJob !== null ? lockPerJob + settlePerJob : null,
    jobsLocked: opened.length,
    jobsSettled: settled.length,
    lockTransactions: lockTxs.length,
    settleTransactions: settleTxs.length,
    meanLockBatch: lockTxs.length ? round(opened.length / lockTxs.length, 1) : null,
    meanSettleBatch: settleTxs.length ? round(settled.length / settleTxs.length, 1) : null,
  };
}

/**
 * One job at a time: the moment its settlement is first seen mined (receipt polled every 5 ms) → the row with
 * the settlement readable through @ponder/client (what the API reads), and → the first delivery attempt of its
 * `job.completed` webhook (attempt records in Postgres).
 */
async function measureLags(info: BenchStack["info"], apiKey: string, chain: Chain) {
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
    const created = await fetch(`${info.apiUrl}/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `http://127.0.0.1:${RECEIVER_PORT}/hook`, events: ["job.completed"] }),
    });
    const hook = (await created.json()) as { id?: string };
    for (let i = 0; i < SAMPLES; i++) {
      const result = await gatewayComplete(info.apiUrl, apiKey, LATENCY_MODEL, MAX_TOKENS);
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
      await fetch(`${info.apiUrl}/v1/webhooks/${hook.id}`, {
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
