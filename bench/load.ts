import { existsSync, readFileSync } from "node:fs";
import type { StackInfo } from "../scripts/stack/startLocalStack.js";
import { countKinds, errorKind, gatewayComplete, gatewayStream } from "./clients.js";
import { DbBreakdown, STATS_FLUSH_MS } from "./dbStats.js";
import { cpuTotals, memoryMb, pidOfPort, processTree, type Watched } from "./procStats.js";

/**
 * `npx tsx bench/load.ts [clients] [seconds] [whole|stream]`: closed-loop load against `.local/bench/stack.json`
 * (`bench/keepStack.ts`), for profiling: whole completions over every model, or streams of the bench's latency model
 * (as the closed-loop latency levels send them). Prints CPU ms per job of the gateway, chain, indexer and Postgres
 * (the postmaster's whole tree), the requests the indexer served per job, Postgres backend CPU per job by client
 * process and, when the server preloads `pg_stat_statements` (`shared_preload_libraries` in
 * `.local/bench/postgres/data/postgresql.auto.conf`, as `bench/run.ts` sets it), the costliest statements and who sent them.
 */
const info = JSON.parse(readFileSync(".local/bench/stack.json", "utf8")) as StackInfo;
const clients = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 15);
const kind = process.argv[4] ?? "whole";
// The wallets `bench/keepStack.ts` seeded (client i uses wallet i mod their count, as the bench's throughput
// levels do), else the demo wallet.
const walletsFile = ".local/bench/wallets.json";
const keys = existsSync(walletsFile)
  ? (JSON.parse(readFileSync(walletsFile, "utf8")) as { apiKey: string }[]).map((wallet) => wallet.apiKey)
  : [info.demo.apiKey];
const models = [...new Set(info.workers.flatMap((worker) => worker.models))];
const port = (url: string) => Number(new URL(url).port);
const gatewayPid = pidOfPort(port(info.apiUrl));
const groups: Watched[] = [
  { name: "gateway", pids: () => (gatewayPid ? processTree(gatewayPid) : []) },
  { name: "chain", pids: () => processTree(pidOfPort(port(info.rpcUrl)) ?? -1) },
  { name: "indexer", pids: () => processTree(pidOfPort(port(info.indexerUrl)) ?? -1) },
  // The postmaster's tree: every backend, whoever its client (split by client below).
  { name: "postgres", pids: () => processTree(pidOfPort(port(info.databaseUrl)) ?? -1) },
];
// Postgres backend CPU by client process, and the indexer's statements (pg_stat_statements when loaded).
const dbWork = await DbBreakdown.open(
  info.databaseUrl,
  groups.filter((group) => group.name !== "postgres"),
);
const dbFrom = await dbWork.start();
// BENCH_DB_TABLES=1: rows written per job by table too (their counters need STATS_FLUSH_MS after the load).
const tablesFrom = process.env.BENCH_DB_TABLES === "1" ? dbFrom : undefined;
// The gateway's chain calls when `bench/keepStack.ts` counts them (BENCH_COUNT_RPC=1).
const counterUrl = `http://127.0.0.1:${port(info.rpcUrl) + 18}/counts`;
const rpcCounts = async (): Promise<Record<string, number>> => {
  try {
    return (await (await fetch(counterUrl)).json()) as Record<string, number>;
  } catch {
    return {};
  }
};
// Requests the indexer served (Ponder's /metrics): the gateway's index reads and the webhook dispatcher's.
const indexerRequests = async (): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {};
  try {
    const text = await (await fetch(`${info.indexerUrl}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    for (const match of text.matchAll(
      /^ponder_http_server_request_duration_ms_count\{[^}]*path="([^"]+)"[^}]*\} (\d+)/gm,
    ))
      counts[match[1]!] = (counts[match[1]!] ?? 0) + Number(match[2]);
  } catch {
    // No figures: the line is left out.
  }
  return counts;
};
const requestsBefore = await indexerRequests();
const cpuBefore = cpuTotals(groups);
const rpcBefore = await rpcCounts();
// CLOCK_MONOTONIC µs, the clock of a V8 CPU profile's timestamps: `bench/summarizeProfile.ts` keeps this window.
const monotonicStart = process.hrtime.bigint() / 1000n;
const until = performance.now() + seconds * 1000;
const ttfts: number[] = [];
let done = 0;
const failures: string[] = [];
// `open`: requests arrive at `clients` per second whatever the answers (open loop), streams of the latency model.
const openLoop =
  kind === "open"
    ? Array.from({ length: Math.floor(clients * seconds) }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, (index * 1000) / clients));
        const result = await gatewayStream(
          info.apiUrl,
          keys[index % keys.length]!,
          process.env.BENCH_MODEL ?? "qwen3-1.7b",
          16,
        ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
        if (result instanceof Error || result.status !== 200) return void failures.push(errorKind(result));
        done++;
        if (result.ttftMs !== undefined) ttfts.push(result.ttftMs);
      })
    : [];
await Promise.all(openLoop);
await Promise.all(
  Array.from({ length: kind === "open" ? 0 : clients }, async (_, client) => {
    for (let round = 0; performance.now() < until; round++) {
      const result =
        kind === "stream"
          ? await gatewayStream(info.apiUrl, keys[client % keys.length]!, process.env.BENCH_MODEL ?? "qwen3-1.7b", 16)
          : await gatewayComplete(
              info.apiUrl,
              keys[client % keys.length]!,
              models[(client + round) % models.length]!,
              16,
            );
      if (result.status === 200) done++;
      else failures.push(errorKind(result));
      if (result.ttftMs !== undefined) ttfts.push(result.ttftMs);
    }
  }),
);
if (failures.length > 0) console.log(`failed: ${JSON.stringify(countKinds(failures))}`);
ttfts.sort((a, b) => a - b);
console.log(
  `${done} ${kind === "stream" ? "streams" : "completions"} in ${seconds} s: ${(done / seconds).toFixed(1)}/s` +
    (kind !== "whole" ? `, TTFT p90 ${ttfts[Math.floor(ttfts.length * 0.9)]?.toFixed(1)} ms` : "") +
    (kind !== "whole" ? `, TTFT p50 ${ttfts[Math.floor(ttfts.length / 2)]?.toFixed(1)} ms` : ""),
);
const monotonicEnd = process.hrtime.bigint() / 1000n;
// Jobs land on chain a little after their answers (the bench waits 1.5 s for them, plus a block on an interval chain).
await new Promise((resolve) => setTimeout(resolve, Number(process.env.BENCH_SETTLE_WAIT_MS ?? 2500)));
const cpuAfter = cpuTotals(groups);
const rpcAfter = await rpcCounts();
const perJob = (value: number) => (done === 0 ? 0 : value / done);
console.log(
  `CPU ms/job: ${groups.map((group) => `${group.name} ${(perJob(cpuAfter[group.name]! - cpuBefore[group.name]!) * 1000).toFixed(2)}`).join(", ")}` +
    (gatewayPid
      ? `; gateway RSS ${memoryMb(gatewayPid)?.rssMb.toFixed(0)} MB (peak ${memoryMb(gatewayPid)?.peakMb.toFixed(0)})`
      : ""),
);
const requestsAfter = await indexerRequests();
console.log(
  `indexer requests per job: ${Object.keys(requestsAfter)
    .filter((path) => path !== "/metrics")
    .map((path) => `${path} ${perJob(requestsAfter[path]! - (requestsBefore[path] ?? 0)).toFixed(3)}`)
    .join(", ")}`,
);
const db = await dbWork.finish(dbFrom, done);
if (db) {
  console.log(
    `Postgres backend CPU ms/job by client: ${Object.entries(db.cpuMsPerJobByClient)
      .map(([client, ms]) => `${client} ${ms}`)
      .join(", ")}; statements/job ${db.statementsPerJob}, exec ms/job ${db.execMsPerJob}`,
  );
  for (const statement of db.topStatements)
    console.log(
      `  ${statement.client} ${statement.execMsPerJob} ms ${statement.callsPerJob} calls ${statement.rowsPerJob} rows/job: ${statement.query.slice(0, 110)}`,
    );
}
if (tablesFrom) {
  await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
  for (const table of await dbWork.tablesSince(tablesFrom, done))
    console.log(
      `  rows/job ${table.table}: ${table.insertsPerJob} inserted, ${table.updatesPerJob} updated, ${table.deletesPerJob} deleted`,
    );
}
await dbWork.close();
const methods = Object.keys(rpcAfter)
  .map((method) => [method, perJob((rpcAfter[method] ?? 0) - (rpcBefore[method] ?? 0))] as const)
  .filter(([, calls]) => calls > 0)
  .sort((a, b) => b[1] - a[1]);
if (methods.length > 0)
  console.log(
    `gateway chain calls per job: ${methods.map(([method, calls]) => `${method} ${calls.toFixed(3)}`).join(", ")}`,
  );
console.log(`profile window (CLOCK_MONOTONIC µs): ${monotonicStart} ${monotonicEnd}`);
