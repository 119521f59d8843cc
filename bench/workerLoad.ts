import { spawn, type ChildProcess } from "node:child_process";
import { workerStream } from "./clients.js";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { TOKEN_DELIVERIES } from "../shared/workerProtocol/index.js";
import { BENCH_WORKER } from "./obtainStack.js";

/**
 * Simulated workers with the bench's timing (`BENCH_WORKER`), loaded directly over the worker protocol: CPU ms of
 * each worker process per job. `npx tsx bench/workerLoad.ts [jobs] [concurrency] [port]`.
 *
 * `WORKER_CWDS=/a,/b` runs the worker of each checkout side by side (ports `port`, `port + 1`, …), each with its own
 * `concurrency` clients and `jobs` jobs at the same time, so an A/B against an earlier commit sees the same
 * contention on a shared machine (default: this checkout alone). `WORKER_NODE_OPTIONS` reaches the workers (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`, written when they stop; the printed window is the profile's clock).
 * `WORKER_DELIVERY=whole` asks for the delivery of the gateway's whole completions (default: a line per token).
 */
const jobs = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 25);
const basePort = Number(process.argv[4] ?? 8897);
const token = "bench-worker-token-0123456789";
const escrow = { chain_id: 31337, address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;
const cwds = (process.env.WORKER_CWDS ?? process.cwd()).split(",");
/** How the workers write the tokens (`WORKER_DELIVERY=whole`, as for the gateway's whole completions; default stream). */
const delivery = z.enum(TOKEN_DELIVERIES).parse(process.env.WORKER_DELIVERY ?? "stream");

/** User and system CPU seconds of a process so far (clock ticks of 10 ms). */
function cpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

type Started = { cwd: string; endpoint: string; child: ChildProcess; pid: number };

async function startWorker(cwd: string, port: number): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", "worker/main.ts"], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_OPTIONS: process.env.WORKER_NODE_OPTIONS ?? "",
      WORKER_PRIVATE_KEY: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
      WORKER_PORT: String(port),
      WORKER_GATEWAY_TOKEN: token,
      WORKER_MODELS: "qwen3-1.7b",
      WORKER_LOG_LEVEL: "warn",
      WORKER_MAX_INFLIGHT: "2000",
      SIM_TTFT_MS: String(BENCH_WORKER.ttftMs),
      SIM_TOKENS_PER_SECOND: String(BENCH_WORKER.tokensPerSecond),
      SIM_MIN_OUTPUT_TOKENS: String(BENCH_WORKER.outputTokens),
      SIM_MAX_OUTPUT_TOKENS: String(BENCH_WORKER.outputTokens),
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`worker of ${cwd} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${endpoint}/healthz`)).ok) break;
    } catch {
      // Not yet listening.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { cwd, endpoint, child, pid: child.pid! };
}

type Run = { seconds: number; ttft: number[]; total: number[] };

async function load(endpoint: string, count: number): Promise<Run> {
  let next = 0;
  const ttft: number[] = [];
  const total: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const timed = await workerStream(endpoint, token, escrow, "qwen3-1.7b", 256, { delivery });
        if (timed.status !== 200 || !timed.body.includes('"type":"done"')) throw new Error(timed.body);
        ttft.push(timed.ttftMs ?? NaN);
        total.push(timed.totalMs);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, ttft, total };
}

const p50 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const workers = await Promise.all(cwds.map((cwd, index) => startWorker(cwd, basePort + index)));
try {
  // Warm-up: JIT, the simulated backend's plan cache.
  await Promise.all(workers.map((worker) => load(worker.endpoint, Math.min(500, jobs))));
  const cpuBefore = workers.map((worker) => cpuSeconds(worker.pid));
  // CLOCK_MONOTONIC µs, the clock of a V8 CPU profile's timestamps: `bench/summarizeProfile.ts` keeps this window.
  const monotonicStart = process.hrtime.bigint() / 1000n;
  const runs = await Promise.all(
    workers.map(async (worker, index) => {
      const run = await load(worker.endpoint, jobs);
      const after = cpuSeconds(worker.pid);
      return {
        run,
        user: after.user - cpuBefore[index]!.user,
        system: after.system - cpuBefore[index]!.system,
      };
    }),
  );
  const monotonicEnd = process.hrtime.bigint() / 1000n;
  for (const [index, { run, user, system }] of runs.entries()) {
    console.log(
      JSON.stringify({
        worker: workers[index]!.cwd,
        jobs,
        concurrency,
        jobsPerSecond: +(jobs / run.seconds).toFixed(1),
        cpuMsPerJob: +(((user + system) * 1000) / jobs).toFixed(4),
        userMsPerJob: +((user * 1000) / jobs).toFixed(4),
        systemMsPerJob: +((system * 1000) / jobs).toFixed(4),
        ttftP50: +p50(run.ttft).toFixed(2),
        totalP50: +p50(run.total).toFixed(2),
      }),
    );
  }
  console.log(`profile window (CLOCK_MONOTONIC µs): ${monotonicStart} ${monotonicEnd}`);
} finally {
  for (const worker of workers) worker.child.kill("SIGTERM");
  await Promise.all(workers.map((worker) => new Promise((resolve) => worker.child.once("exit", resolve))));
}
