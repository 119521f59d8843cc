import type { DbBreakdownResult } from "./dbStats.js";
import type { Quantiles } from "./stats.js";

type Diff = { p50: number | null; p95: number | null; p99: number | null };

type Machine = { cpus: number; cpuModel: string; memoryGb: number; os: string; node: string };

/** The shape of bench/results/latest.json that the tables read: one entry per chain mode. */
export interface BenchResults {
  generatedAt: string;
  machine: Machine;
  /** The commit benched (absent in results written before it was recorded, or outside a git checkout). */
  source?: { commit: string; dirty: boolean } | null;
  modes: ModeResults[];
  durationSeconds: number;
}

/** Every measure on one stack (one chain mode). */
export interface ModeResults {
  /** "automine" or "a block every N s". */
  chain: string;
  stack: {
    quick: boolean;
    gateways: number;
    wallets: number;
    openLoopSeconds: number;
    singleWallet: { clients: number; seconds: number };
    worker: { ttftMs: number; tokensPerSecond: number; outputTokens: number };
    latencySeconds: number;
    throughputSeconds: number;
    lockMode: string;
    gatewayNodeOptions: string;
    latencyModel: string;
  };
  latency: {
    concurrency: number;
    gateway: { ttft: Quantiles; total: Quantiles; errors: number };
    direct: { ttft: Quantiles; total: Quantiles; errors: number };
    added: { ttft: Diff; total: Diff };
  }[];
  openLoop: (OpenLoopRow | { rate: number; skipped: string })[];
  wholeCompletion: { gateway: Quantiles; direct: Quantiles; added: Diff };
  /** On this chain, a whole completion at one client: added total time p50 over direct (ms). */
  wholeCompletionAddedMs: number | null;
  backgroundCommitsPerSecond: number;
  /** The idle stack's database work per second (same shape as a level's `db`, "per job" meaning per second). */
  idleDbPerSecond?: DbBreakdownResult | null;
  singleWallet: {
    clients: number;
    oneWalletPerSecond: number | null;
    manyWalletsPerSecond: number | null;
    ratio: number | null;
    twoGateways: { oneWalletPerSecond: number; manyWalletsPerSecond: number; ratio: number | null } | null;
  };
  throughput: {
    concurrency: number;
    seconds: number;
    wallets: number;
    completedPerSecond: number;
    settledPerSecond: number;
    directPerSecond: number;
    ratioToDirect: number | null;
    errors: number;
    latencyMs: Quantiles;
    cpuCores: Record<string, number>;
    cpuMsPerJob: Record<
      "gateway" | "idleGateways" | "postgres" | "indexer" | "chain" | "workers" | "bench",
      number | null
    >;
    dbCommitsPerJob: number | null;
    db?: DbBreakdownResult | null;
    indexBehind: { blocks: number; seconds: number } | null;
  }[];
  gatewayCpuAt300: { settledPerSecond: number; cores: number } | null;
  gas: {
    lockPerJob: number | null;
    settlePerJob: number | null;
    lockPlusSettlePerJob: number | null;
    jobsLocked: number;
    jobsSettled: number;
    distinctWallets: number;
    distinctWorkers: number;
    lockTransactions: number;
    settleTransactions: number;
    /** Transactions that locked and settled (settlements riding with locks); absent in runs before them. */
    ridingTransactions?: number;
    meanLockBatch: number | null;
    meanSettleBatch: number | null;
  };
  indexLagMs: Quantiles;
  webhookLatencyMs: Quantiles;
  memoryAt200Streams: Record<string, { sampledPeakMb: number; vmHwmMb: number }>;
  gatewayHeapAfter200StreamsMb: Record<string, number>;
  durationSeconds: number;
}

type OpenLoopRow = {
  rate: number;
  seconds: number;
  gateway: { ttft: Quantiles; total: Quantiles; errors: number; errorKinds?: Record<string, number>; unsent: number };
  direct: { ttft: Quantiles; total: Quantiles; errors: number };
  added: { ttft: Diff; total: Diff };
  saturated: boolean;
};

const ms = (value: number | null) => (value === null ? "–" : `${value}`);
const n = (value: number | null) => (value === null ? "–" : value.toLocaleString("en-US"));

function openLoopCell(row: ModeResults["openLoop"][number] | undefined): string {
  if (!row) return "–";
  if ("skipped" in row) return `skipped (${row.skipped})`;
  return `${ms(row.added.ttft.p50)} / ${ms(row.added.ttft.p99)}${row.saturated ? " (saturated)" : ""}`;
}

/** The Markdown report (README table): a summary of both chain modes, then one section per mode. */
export function renderMarkdown(results: BenchResults): string {
  const { machine } = results;
  const lines: string[] = [];
  lines.push(`### Benchmark (${results.generatedAt.slice(0, 10)}, ${results.durationSeconds} s run)`);
  lines.push("");
  lines.push(
    `Machine: ${machine.cpus} cores, ${machine.cpuModel}, ${machine.memoryGb} GB RAM, ${machine.os}, Node ${machine.node}.`,
  );
  if (results.source)
    lines.push(
      "",
      `Source: commit ${results.source.commit}${results.source.dirty ? ", with uncommitted changes" : ""}.`,
    );
  lines.push("");
  lines.push(
    "**Summary** (issue 26 targets: ≥ 500 settled jobs/s; CPU ms per settled job gateway ≤ 2, Postgres ≤ 1.5, " +
      "indexer ≤ 1.5, chain ≤ 1, workers ≤ 1; ≤ 3 commits per job; one wallet ≥ 0.8 of many; open-loop added TTFT " +
      "p50 ≤ 3 ms and p99 ≤ 15 ms at 100/s; whole completion at one client adds ≤ 30 ms p50 on the 1 s chain; " +
      "gateway RSS at 200 streams ≤ 300 MB. Issue 22: lock + settle ≤ 30k gas per job)",
  );
  lines.push("");
  if (results.modes.some((mode) => mode.stack.quick))
    lines.push("Quick run (`--quick`): short measures that prove the bench works; figures not comparable.", "");
  const levels = [...new Set(results.modes.flatMap((mode) => mode.latency.map((row) => row.concurrency)))];
  lines.push(
    `| chain | best settled/s (ratio to direct) | CPU ms/job at best: gateway / Postgres / indexer / chain / workers | commits/job | one wallet / many (1 gw; 2 gw) | open loop @100/s added TTFT p50/p99 | whole completion added p50 | ${levels.map((level) => `closed @${level} added TTFT p50/p99`).join(" | ")} | gateway RSS @200 | index lag p50/p95 | lock + settle gas/job |`,
  );
  lines.push(
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ${levels.map(() => "---:").join(" | ")} | ---: | ---: | ---: |`,
  );
  for (const mode of results.modes) {
    const best = mode.throughput.reduce<ModeResults["throughput"][number] | undefined>(
      (top, row) => (!top || row.settledPerSecond > top.settledPerSecond ? row : top),
      undefined,
    );
    const latencyCells = levels.map((level) => {
      const row = mode.latency.find((entry) => entry.concurrency === level);
      return row ? `${ms(row.added.ttft.p50)} / ${ms(row.added.ttft.p99)}` : "–";
    });
    const cpu = best?.cpuMsPerJob;
    const open100 = mode.openLoop.find((row) => row.rate === 100);
    const wallet = mode.singleWallet;
    lines.push(
      `| ${mode.chain} | ${best ? `${best.settledPerSecond} (${ms(best.ratioToDirect)})` : "–"} | ` +
        `${cpu ? `${ms(cpu.gateway)} / ${ms(cpu.postgres)} / ${ms(cpu.indexer)} / ${ms(cpu.chain)} / ${ms(cpu.workers)}` : "–"} | ` +
        `${best ? ms(best.dbCommitsPerJob) : "–"} | ` +
        `${ms(wallet.oneWalletPerSecond)} / ${ms(wallet.manyWalletsPerSecond)} (${ms(wallet.ratio)}; ` +
        `${wallet.twoGateways ? `${wallet.twoGateways.oneWalletPerSecond} / ${wallet.twoGateways.manyWalletsPerSecond} (${ms(wallet.twoGateways.ratio)})` : "–"}) | ` +
        `${openLoopCell(open100)} | ${ms(mode.wholeCompletionAddedMs)} ms | ${latencyCells.join(" | ")} | ` +
        `${mode.memoryAt200Streams.gateway ? `${mode.memoryAt200Streams.gateway.sampledPeakMb} MB` : "–"} | ` +
        `${ms(mode.indexLagMs.p50)} / ${ms(mode.indexLagMs.p95)} ms | ${n(mode.gas.lockPlusSettlePerJob)} |`,
    );
  }
  lines.push("");
  for (const mode of results.modes) lines.push(...renderMode(mode));
  return lines.join("\n");
}

function renderMode(results: ModeResults): string[] {
  const { stack } = results;
  const lines: string[] = [];
  lines.push(`#### Chain: ${results.chain} (${results.durationSeconds} s)`);
  lines.push("");
  lines.push(
    `Simulated workers: TTFT ${stack.worker.ttftMs} ms, ${stack.worker.tokensPerSecond} tokens/s, ` +
      `${stack.worker.outputTokens} tokens per answer. ${stack.gateways} gateway process(es) (every measure but the two-gateway runs goes to the first). Lock mode: ${stack.lockMode}. ` +
      `Gateway Node options: \`${stack.gatewayNodeOptions}\`.`,
  );
  lines.push("");
  lines.push(
    `**Added latency, closed loop** (one wallet; gateway − direct to the same workers, streaming \`${stack.latencyModel}\`, interleaved in ` +
      `the same ${stack.latencySeconds} s run per level; ms). Each stream sends its next request as soon as one ends, ` +
      "so from a few streams on this offers more than the stack serves: these figures measure saturation (queueing); " +
      "the gateway's own overhead is the open-loop table's. Past saturation the gateway's TTFT is about the streams " +
      "waiting on it ÷ the streams/s it serves (Little's law), so a lower streams/s shows as a higher TTFT.",
  );
  lines.push("");
  lines.push(
    "| streams | added TTFT p50 | p95 | p99 | added total p50 | p95 | p99 | gateway TTFT p50 | direct TTFT p50 | requests (gw/direct) | gateway streams/s | errors |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const row of results.latency) {
    lines.push(
      `| ${row.concurrency} | ${ms(row.added.ttft.p50)} | ${ms(row.added.ttft.p95)} | ${ms(row.added.ttft.p99)} | ` +
        `${ms(row.added.total.p50)} | ${ms(row.added.total.p95)} | ${ms(row.added.total.p99)} | ` +
        `${ms(row.gateway.ttft.p50)} | ${ms(row.direct.ttft.p50)} | ${row.gateway.ttft.n}/${row.direct.ttft.n} | ` +
        `${Math.round((row.gateway.ttft.n / stack.latencySeconds) * 10) / 10} | ${row.gateway.errors + row.direct.errors} |`,
    );
  }
  lines.push("");
  lines.push(
    `**Open-loop latency** (streaming requests arriving on a fixed schedule, ${stack.openLoopSeconds} s per rate, spread ` +
      `over ${stack.wallets} wallets, as many direct requests to the same workers half a period apart; times count ` +
      "from each request's scheduled arrival; ms). Target at 100/s: added TTFT p50 ≤ 3, p99 ≤ 15. A saturated rate " +
      "(the gateway fell behind the arrivals) measures queueing; the rates above it are skipped.",
  );
  lines.push("");
  lines.push(
    "| rate /s | added TTFT p50 | p95 | p99 | added total p50 | p99 | gateway TTFT p50 | direct TTFT p50 | answered (gw/direct) | errors (gw/direct) | unsent | saturated |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  for (const row of results.openLoop) {
    if ("skipped" in row) {
      lines.push(`| ${row.rate} | skipped (${row.skipped}) | | | | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${row.rate} | ${ms(row.added.ttft.p50)} | ${ms(row.added.ttft.p95)} | ${ms(row.added.ttft.p99)} | ` +
        `${ms(row.added.total.p50)} | ${ms(row.added.total.p99)} | ${ms(row.gateway.ttft.p50)} | ` +
        `${ms(row.direct.ttft.p50)} | ${row.gateway.ttft.n}/${row.direct.ttft.n} | ` +
        `${row.gateway.errors}/${row.direct.errors}${errorKindsOf(row.gateway.errorKinds)} | ${row.gateway.unsent} | ` +
        `${row.saturated ? "yes" : "no"} |`,
    );
  }
  lines.push("");
  const whole = results.wholeCompletion;
  lines.push(
    `**Whole completion at one client** (non-streaming, gateway and direct alternating; ms): added total p50 ` +
      `**${ms(whole.added.p50)}**, p95 ${ms(whole.added.p95)} (gateway p50 ${ms(whole.gateway.p50)}, direct p50 ` +
      `${ms(whole.direct.p50)}, ${whole.gateway.n}/${whole.direct.n} requests). Target on the 1 s chain: ≤ 30.`,
  );
  lines.push("");
  lines.push(
    `**Throughput** (whole completions across all models, closed loop, clients spread over ` +
      `${stack.wallets} wallets, ${stack.throughputSeconds} s per level, then the same workers called directly at the ` +
      "same concurrency for as long). Target ≥ 500 settled jobs/s. CPU ms per settled job of each part of the stack " +
      "(its whole process tree, from the level's start until its jobs settled; gateway: the one the clients send to, " +
      "the stack's idle second gateway apart; " +
      "targets gateway ≤ 2, Postgres ≤ 1.5, indexer ≤ 1.5, chain ≤ 1, workers ≤ 1) and PostgreSQL commits per " +
      `settled job (pg_stat_database, every process of the stack; the stack's idle ` +
      `${results.backgroundCommitsPerSecond} commits/s and the bench's reads taken off; target ≤ 3).`,
  );
  lines.push("");
  lines.push(
    "| clients | settled/s | direct/s | ratio | completed/s | errors | latency p50 | p99 | index behind (blocks / s) | commits/job | CPU ms/job gateway | Postgres | indexer | chain | workers | bench | idle gateway |",
  );
  lines.push(
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const row of results.throughput) {
    const cpu = row.cpuMsPerJob;
    lines.push(
      `| ${row.concurrency} | ${row.settledPerSecond} | ${row.directPerSecond} | ${ms(row.ratioToDirect)} | ` +
        `${row.completedPerSecond} | ${row.errors} | ` +
        `${ms(row.latencyMs.p50)} | ${ms(row.latencyMs.p99)} | ` +
        `${row.indexBehind ? `${row.indexBehind.blocks} / ${row.indexBehind.seconds}` : "–"} | ` +
        `${ms(row.dbCommitsPerJob)} | ${ms(cpu.gateway)} | ${ms(cpu.postgres)} | ${ms(cpu.indexer)} | ` +
        `${ms(cpu.chain)} | ${ms(cpu.workers)} | ${ms(cpu.bench)} | ${ms(cpu.idleGateways)} |`,
    );
  }
  lines.push("");
  const cpuNames = Object.keys(results.throughput[0]?.cpuCores ?? {});
  lines.push("CPU in cores during each level (1.0 = one core busy):");
  lines.push("");
  lines.push(`| clients | ${cpuNames.join(" | ")} |`);
  lines.push(`| ---: | ${cpuNames.map(() => "---:").join(" | ")} |`);
  for (const row of results.throughput)
    lines.push(`| ${row.concurrency} | ${cpuNames.map((name) => row.cpuCores[name]).join(" | ")} |`);
  lines.push("");
  lines.push(...renderDbWork(results));
  const wallet = results.singleWallet;
  lines.push(
    `**One wallet against many** (${stack.singleWallet.clients} closed-loop clients of whole completions, ` +
      `${stack.singleWallet.seconds} s each, all on the demo wallet or spread over ${stack.wallets} wallets; with two ` +
      "gateways the clients alternate between them). Target: one wallet ≥ 0.8 of many, with one gateway and with two.",
  );
  lines.push("");
  lines.push("| gateways | one wallet settled/s | many wallets settled/s | ratio |");
  lines.push("| ---: | ---: | ---: | ---: |");
  lines.push(`| 1 | ${ms(wallet.oneWalletPerSecond)} | ${ms(wallet.manyWalletsPerSecond)} | ${ms(wallet.ratio)} |`);
  lines.push(
    wallet.twoGateways
      ? `| 2 | ${wallet.twoGateways.oneWalletPerSecond} | ${wallet.twoGateways.manyWalletsPerSecond} | ${ms(wallet.twoGateways.ratio)} |`
      : "| 2 | – (one-gateway stack) | – | – |",
  );
  lines.push("");
  const gas = results.gas;
  lines.push(
    results.gatewayCpuAt300
      ? `Gateway CPU at ~300 jobs/s: ${results.gatewayCpuAt300.cores} cores (level at ${results.gatewayCpuAt300.settledPerSecond} settled/s).`
      : "Gateway CPU at ~300 jobs/s: not reached in this run.",
  );
  lines.push("");
  lines.push(
    "**Gas per job** (Σ gasUsed of every transaction of the throughput levels that locked or settled jobs, each once, ÷ " +
      "the mean of jobs locked and settled: traffic over many wallets and every worker; lock and settle: the " +
      "transactions that only lock or only settle). Target (issue 22) ≤ 30k.",
  );
  lines.push("");
  lines.push(
    "| lock | settle | lock + settle | jobs locked / settled | wallets / workers | lock txs (mean batch) | settle txs (mean batch) | both |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  lines.push(
    `| ${n(gas.lockPerJob)} | ${n(gas.settlePerJob)} | ${n(gas.lockPlusSettlePerJob)} | ${gas.jobsLocked} / ${gas.jobsSettled} | ` +
      `${gas.distinctWallets} / ${gas.distinctWorkers} | ` +
      `${gas.lockTransactions} (${ms(gas.meanLockBatch)}) | ${gas.settleTransactions} (${ms(gas.meanSettleBatch)}) | ` +
      `${gas.ridingTransactions ?? "—"} |`,
  );
  lines.push("");
  lines.push("**Index lag and webhooks** (ms from the settlement seen mined, one job at a time)");
  lines.push("");
  lines.push("| measure | p50 | p95 | samples |");
  lines.push("| --- | ---: | ---: | ---: |");
  lines.push(
    `| mined → row readable via @ponder/client | ${ms(results.indexLagMs.p50)} | ${ms(results.indexLagMs.p95)} | ${results.indexLagMs.n} |`,
  );
  lines.push(
    `| mined → first webhook delivery attempt | ${ms(results.webhookLatencyMs.p50)} | ${ms(results.webhookLatencyMs.p95)} | ${results.webhookLatencyMs.n} |`,
  );
  lines.push("");
  lines.push("**Memory** during the 200-stream run (MB). Target: gateway ≤ 300.");
  lines.push("");
  lines.push("| process | peak RSS sampled | VmHWM (process lifetime) |");
  lines.push("| --- | ---: | ---: |");
  for (const [name, value] of Object.entries(results.memoryAt200Streams))
    lines.push(`| ${name} | ${value.sampledPeakMb} | ${value.vmHwmMb} |`);
  const heap = results.gatewayHeapAfter200StreamsMb;
  lines.push("");
  lines.push(
    `Gateway right after the 200-stream run (its /metrics, MB): RSS ${heap.rss}, V8 heap ${heap.heapUsed} used of ` +
      `${heap.heapTotal}, external ${heap.external}.`,
  );
  lines.push("");
  return lines;
}

/** PostgreSQL's work per settled job at the highest throughput level, and the idle stack's per second. */
function renderDbWork(results: ModeResults): string[] {
  const lines: string[] = [];
  const level = [...results.throughput].reverse().find((row) => row.db);
  const show = (title: string, db: DbBreakdownResult, unit: string) => {
    lines.push(
      `${title}: statements ${db.statementsPerJob}/${unit}, execution ${db.execMsPerJob} ms/${unit} ` +
        "(pg_stat_statements; planning, protocol and commit are outside it). Backend CPU ms per " +
        `${unit} by client process (from /proc; the client is the process at the other end of the connection): ` +
        Object.entries(db.cpuMsPerJobByClient)
          .map(([name, value]) => `${name} ${value}`)
          .join(", ") +
        ".",
    );
    lines.push("");
    if (db.topStatements.length > 0) {
      lines.push(`| client | statement | calls/${unit} | rows/${unit} | exec ms/${unit} | WAL records/${unit} |`);
      lines.push("| --- | --- | ---: | ---: | ---: | ---: |");
      for (const row of db.topStatements)
        lines.push(
          `| ${row.client} | \`${row.query.replace(/\|/g, "\\|")}\` | ${row.callsPerJob} | ${row.rowsPerJob} | ` +
            `${row.execMsPerJob} | ${row.walRecordsPerJob} |`,
        );
      lines.push("");
    }
    if (db.tables.length > 0) {
      lines.push(`| table | inserts/${unit} | updates/${unit} | deletes/${unit} |`);
      lines.push("| --- | ---: | ---: | ---: |");
      for (const row of db.tables)
        lines.push(`| ${row.table} | ${row.insertsPerJob} | ${row.updatesPerJob} | ${row.deletesPerJob} |`);
      lines.push("");
    }
  };
  if (level?.db) show(`**PostgreSQL per settled job** (${level.concurrency} clients)`, level.db, "job");
  if (results.idleDbPerSecond) show("**PostgreSQL of the idle stack, per second**", results.idleDbPerSecond, "s");
  return lines;
}

/** The gateway's failed requests by kind, as " (503 service_unavailable × 3)"; nothing when none failed. */
function errorKindsOf(kinds: Record<string, number> | undefined): string {
  const entries = Object.entries(kinds ?? {});
  return entries.length === 0 ? "" : ` (${entries.map(([kind, count]) => `${kind} × ${count}`).join(", ")})`;
}
