import type { Quantiles } from "./stats.js";

type Diff = { p50: number | null; p95: number | null; p99: number | null };

/** The shape of bench/results/latest.json that the table reads. */
export interface BenchResults {
  generatedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; os: string; node: string };
  stack: {
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
    errors: number;
    latencyMs: Quantiles;
    cpuCores: Record<string, number>;
  }[];
  gas: {
    lockPerJob: number | null;
    settleSinglePerJob: number | null;
    settleBatchedPerJob: number | null;
    meanBatchSize: number | null;
    maxBatchSize: number | null;
    totalPerJobSingle: number | null;
    totalPerJobBatched: number | null;
  };
  indexLagMs: Quantiles;
  webhookLatencyMs: Quantiles;
  memoryAt200Streams: Record<string, { sampledPeakMb: number; vmHwmMb: number }>;
  gatewayHeapAfter200StreamsMb: Record<string, number>;
  durationSeconds: number;
}

const ms = (value: number | null) => (value === null ? "–" : `${value}`);
const n = (value: number | null) => (value === null ? "–" : value.toLocaleString("en-US"));

/** The Markdown report (README table): one section per measure, the targets next to the figures. */
export function renderMarkdown(results: BenchResults): string {
  const { machine, stack } = results;
  const lines: string[] = [];
  lines.push(`### Benchmark (${results.generatedAt.slice(0, 10)}, ${results.durationSeconds} s run)`);
  lines.push("");
  lines.push(
    `Machine: ${machine.cpus} cores, ${machine.cpuModel}, ${machine.memoryGb} GB RAM, ${machine.os}, Node ${machine.node}. ` +
      `Simulated workers: TTFT ${stack.worker.ttftMs} ms, ${stack.worker.tokensPerSecond} tokens/s, ` +
      `${stack.worker.outputTokens} tokens per answer. Local Hardhat automine chain. Lock mode: ${stack.lockMode}. ` +
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
    `**Throughput** (whole completions across all models, closed loop, ${stack.throughputSeconds} s per level — ` +
      "shortened from 60 s to keep the run under 5 minutes). Target ≥ 200 settled jobs/s. CPU in cores (1.0 = one core busy).",
  );
  lines.push("");
  const cpuNames = Object.keys(results.throughput[0]?.cpuCores ?? {});
  lines.push(`| clients | settled/s | completed/s | errors | latency p50 | p99 | ${cpuNames.join(" | ")} |`);
  lines.push(`| ---: | ---: | ---: | ---: | ---: | ---: | ${cpuNames.map(() => "---:").join(" | ")} |`);
  for (const row of results.throughput) {
    lines.push(
      `| ${row.concurrency} | ${row.settledPerSecond} | ${row.completedPerSecond} | ${row.errors} | ` +
        `${ms(row.latencyMs.p50)} | ${ms(row.latencyMs.p99)} | ${cpuNames.map((name) => row.cpuCores[name]).join(" | ")} |`,
    );
  }
  lines.push("");
  const gas = results.gas;
  lines.push("**Gas per job** (mean of the run's own transactions)");
  lines.push("");
  lines.push(
    "| lock (openJob) | settle, single | settle, batched (per job) | lock + single | lock + batched | mean / max batch |",
  );
  lines.push("| ---: | ---: | ---: | ---: | ---: | ---: |");
  lines.push(
    `| ${n(gas.lockPerJob)} | ${n(gas.settleSinglePerJob)} | ${n(gas.settleBatchedPerJob)} | ${n(gas.totalPerJobSingle)} | ` +
      `${n(gas.totalPerJobBatched)} | ${ms(gas.meanBatchSize)} / ${ms(gas.maxBatchSize)} |`,
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
  return lines.join("\n");
}
