import type { Quantiles } from "./stats.js";

type Diff = { p50: number | null; p95: number | null; p99: number | null };

type Machine = { cpus: number; cpuModel: string; memoryGb: number; os: string; node: string };

/** The shape of bench/results/latest.json that the tables read: one entry per chain mode. */
export interface BenchResults {
  generatedAt: string;
  machine: Machine;
  modes: ModeResults[];
  durationSeconds: number;
}

/** Every measure on one stack (one chain mode). */
export interface ModeResults {
  /** "automine" or "a block every N s". */
  chain: string;
  stack: {
    gateways: number;
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
  throughput: {
    concurrency: number;
    seconds: number;
    completedPerSecond: number;
    settledPerSecond: number;
    directPerSecond: number;
    ratioToDirect: number | null;
    errors: number;
    latencyMs: Quantiles;
    cpuCores: Record<string, number>;
    indexBehind: { blocks: number; seconds: number } | null;
  }[];
  gatewayCpuAt300: { settledPerSecond: number; cores: number } | null;
  gas: {
    lockPerJob: number | null;
    settlePerJob: number | null;
    lockPlusSettlePerJob: number | null;
    jobsLocked: number;
    jobsSettled: number;
    lockTransactions: number;
    settleTransactions: number;
    meanLockBatch: number | null;
    meanSettleBatch: number | null;
  };
  indexLagMs: Quantiles;
  webhookLatencyMs: Quantiles;
  memoryAt200Streams: Record<string, { sampledPeakMb: number; vmHwmMb: number }>;
  gatewayHeapAfter200StreamsMb: Record<string, number>;
  durationSeconds: number;
}

const ms = (value: number | null) => (value === null ? "–" : `${value}`);
const n = (value: number | null) => (value === null ? "–" : value.toLocaleString("en-US"));

/** The Markdown report (README table): a summary of both chain modes, then one section per mode. */
export function renderMarkdown(results: BenchResults): string {
  const { machine } = results;
  const lines: string[] = [];
  lines.push(`### Benchmark (${results.generatedAt.slice(0, 10)}, ${results.durationSeconds} s run)`);
  lines.push("");
  lines.push(
    `Machine: ${machine.cpus} cores, ${machine.cpuModel}, ${machine.memoryGb} GB RAM, ${machine.os}, Node ${machine.node}.`,
  );
  lines.push("");
  lines.push(
    "**Summary** (targets: added TTFT p50 ≤ 3 ms and p99 ≤ 15 ms at 50 streams, p50 ≤ 5 ms at 200; ≥ 500 settled " +
      "jobs/s; gateway ≤ 1 core at 300 jobs/s; lock + settle ≤ 55k gas per job)",
  );
  lines.push("");
  const levels = [...new Set(results.modes.flatMap((mode) => mode.latency.map((row) => row.concurrency)))];
  lines.push(
    `| chain | ${levels.map((level) => `added TTFT p50/p99 @${level}`).join(" | ")} | best settled/s (ratio to direct) | gateway CPU @~300/s | index lag p50/p95 | lock + settle gas/job |`,
  );
  lines.push(`| --- | ${levels.map(() => "---:").join(" | ")} | ---: | ---: | ---: | ---: |`);
  for (const mode of results.modes) {
    const best = mode.throughput.reduce<ModeResults["throughput"][number] | undefined>(
      (top, row) => (!top || row.settledPerSecond > top.settledPerSecond ? row : top),
      undefined,
    );
    const latencyCells = levels.map((level) => {
      const row = mode.latency.find((entry) => entry.concurrency === level);
      return row ? `${ms(row.added.ttft.p50)} / ${ms(row.added.ttft.p99)}` : "–";
    });
    lines.push(
      `| ${mode.chain} | ${latencyCells.join(" | ")} | ${best ? `${best.settledPerSecond} (${ms(best.ratioToDirect)})` : "–"} | ` +
        `${mode.gatewayCpuAt300 ? `${mode.gatewayCpuAt300.cores} cores at ${mode.gatewayCpuAt300.settledPerSecond}/s` : "not reached"} | ` +
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
      `${stack.worker.outputTokens} tokens per answer. ${stack.gateways} gateway process(es). Lock mode: ${stack.lockMode}. ` +
      `Gateway Node options: \`${stack.gatewayNodeOptions}\`.`,
  );
  lines.push("");
  lines.push(
    `**Added latency** (gateway − direct to the same workers, streaming \`${stack.latencyModel}\`, interleaved in ` +
      `the same ${stack.latencySeconds} s run per level; ms). Target at 50 streams: TTFT p50 ≤ 3, p99 ≤ 15.`,
  );
  lines.push("");
  lines.push(
    "| streams | added TTFT p50 | p95 | p99 | added total p50 | p95 | p99 | gateway TTFT p50 | direct TTFT p50 | requests (gw/direct) | errors |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const row of results.latency) {
    lines.push(
      `| ${row.concurrency} | ${ms(row.added.ttft.p50)} | ${ms(row.added.ttft.p95)} | ${ms(row.added.ttft.p99)} | ` +
        `${ms(row.added.total.p50)} | ${ms(row.added.total.p95)} | ${ms(row.added.total.p99)} | ` +
        `${ms(row.gateway.ttft.p50)} | ${ms(row.direct.ttft.p50)} | ${row.gateway.ttft.n}/${row.direct.ttft.n} | ` +
        `${row.gateway.errors + row.direct.errors} |`,
    );
  }
  lines.push("");
  lines.push(
    `**Throughput** (whole completions across all models, closed loop, ${stack.throughputSeconds} s per level, then ` +
      "the same workers called directly at the same concurrency for as long; shortened from 60 s to keep both chain " +
      "modes near ten minutes). Target ≥ 500 settled jobs/s. CPU in cores (1.0 = one core busy) during the gateway run.",
  );
  lines.push("");
  const cpuNames = Object.keys(results.throughput[0]?.cpuCores ?? {});
  lines.push(
    `| clients | settled/s | direct/s | ratio | completed/s | errors | latency p50 | p99 | index behind (blocks / s) | ${cpuNames.join(" | ")} |`,
  );
  lines.push(
    `| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ${cpuNames.map(() => "---:").join(" | ")} |`,
  );
  for (const row of results.throughput) {
    lines.push(
      `| ${row.concurrency} | ${row.settledPerSecond} | ${row.directPerSecond} | ${ms(row.ratioToDirect)} | ` +
        `${row.completedPerSecond} | ${row.errors} | ` +
        `${ms(row.latencyMs.p50)} | ${ms(row.latencyMs.p99)} | ` +
        `${row.indexBehind ? `${row.indexBehind.blocks} / ${row.indexBehind.seconds}` : "–"} | ` +
        `${cpuNames.map((name) => row.cpuCores[name]).join(" | ")} |`,
    );
  }
  lines.push("");
  const gas = results.gas;
  lines.push(
    results.gatewayCpuAt300
      ? `Gateway CPU at ~300 jobs/s: ${results.gatewayCpuAt300.cores} cores (level at ${results.gatewayCpuAt300.settledPerSecond} settled/s).`
      : "Gateway CPU at ~300 jobs/s: not reached in this run.",
  );
  lines.push("");
  lines.push(
    "**Gas per job** (Σ gasUsed of every openJob/openJobBatch and settle/settleBatch transaction of the run ÷ the jobs " +
      "they locked / settled)",
  );
  lines.push("");
  lines.push(
    "| lock | settle | lock + settle | jobs locked / settled | lock txs (mean batch) | settle txs (mean batch) |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: |");
  lines.push(
    `| ${n(gas.lockPerJob)} | ${n(gas.settlePerJob)} | ${n(gas.lockPlusSettlePerJob)} | ${gas.jobsLocked} / ${gas.jobsSettled} | ` +
      `${gas.lockTransactions} (${ms(gas.meanLockBatch)}) | ${gas.settleTransactions} (${ms(gas.meanSettleBatch)}) |`,
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
