/**
 * `npm test` after compile: lint and every suite, three at a time (RUNNERS). Each stack suite starts its own stack on its own
 * ports and state folder (test/support/testStackOptions.ts and each suite's globalSetup), and the contract suite
 * builds its coverage into its own artifacts folder (HARDHAT_ARTIFACTS_DIR), so no two suites share anything but the
 * CPU. The runners take the next suite from one queue, longest first (measured times, CI at b4a5452, seconds: api
 * 964, contracts 422, api:unit 308, chaos 274, indexer 259, web 246, chainfaults 223, webhooks 212, fuzz 212,
 * lint 173, worker 119, multigw 113, deploy 45, shared 28), so no runner idles while another still has a
 * queue of its own: fixed lanes balanced on one run's times left one lane about 250 s behind the other when the
 * times moved. CI's budget is 30 minutes. Lint runs first beside the API suite's stack start (which keeps about
 * one core busy), and the contract suite waits for it because that suite's coverage build regenerates TypeChain's
 * types, which `tsc` reads.
 *
 * A failing suite does not stop the run: the suites share nothing but the CPU, so one run reports every failing
 * suite. Each suite's output goes to `.local/test-logs/<suite>.log` and is printed whole when the suite ends, so the
 * log of a run reads suite by suite instead of interleaved; after the summary, the end of each failed suite's log
 * (where vitest and mocha put their failure reports) is printed again, because a CI log is often read from its tail.
 * Exit code 1 when any suite failed.
 *
 * `SUITES_SEQUENTIAL=1` runs the same suites one after another (for a machine with one core).
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const logDir = path.join(root, ".local", "test-logs");

/** npm scripts, longest first; `after` names the suite one must wait for. */
const QUEUE: readonly { suite: string; after?: string }[] = [
  { suite: "test:api" },
  { suite: "lint" },
  { suite: "test:contracts", after: "lint" },
  { suite: "test:api:unit" },
  { suite: "test:chaos" },
  { suite: "test:indexer" },
  { suite: "test:web" },
  { suite: "test:chainfaults" },
  { suite: "test:webhooks" },
  { suite: "test:fuzz" },
  { suite: "test:worker" },
  { suite: "test:multigw" },
  { suite: "test:deploy" },
  { suite: "test:shared" },
];
/**
 * Three runners on CI's two cores: much of the suites' time is spent waiting on wall clocks (the API suite alone waits
 * out a 120 s chain deadline, restarts its stack and sleeps through backoffs), and with two runners the run was work-
 * bound at ~31 minutes (sum of the suites / 2). `SUITES_RUNNERS` overrides.
 */
const RUNNERS = Number(process.env.SUITES_RUNNERS ?? 3);

type Outcome = { suite: string; ok: boolean; seconds: number };

const logName = (suite: string) => suite.replaceAll(":", "-");

function runSuite(suite: string): Promise<Outcome> {
  const started = Date.now();
  const logFile = path.join(logDir, `${logName(suite)}.log`);
  const log = createWriteStream(logFile);
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", suite], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on("close", (code) => {
      log.end(() => {
        const seconds = Math.round((Date.now() - started) / 1000);
        const ok = code === 0;
        process.stdout.write(`\n===== ${suite}: ${ok ? "passed" : `FAILED (exit ${code})`} in ${seconds} s =====\n`);
        process.stdout.write(readFileSync(logFile, "utf8"));
        process.stdout.write(`===== end of ${suite} =====\n`);
        resolve({ suite, ok, seconds });
      });
    });
  });
}

/**
 * Runs the queue on `runners` runners: each takes the first waiting suite whose `after` has ended (whether it passed
 * or not: the order only keeps two suites from writing the same files at once).
 */
async function runQueue(runners: number): Promise<Outcome[]> {
  const waiting = [...QUEUE];
  const ended = new Set<string>();
  const outcomes: Outcome[] = [];
  const sleeping: (() => void)[] = [];
  async function runner(): Promise<void> {
    for (;;) {
      if (waiting.length === 0) return;
      const index = waiting.findIndex(({ after }) => after === undefined || ended.has(after));
      if (index < 0) {
        // Every waiting suite waits for one still running on the other runner.
        await new Promise<void>((resolve) => sleeping.push(resolve));
        continue;
      }
      const [{ suite }] = waiting.splice(index, 1) as [{ suite: string }];
      outcomes.push(await runSuite(suite));
      ended.add(suite);
      for (const wake of sleeping.splice(0)) wake();
    }
  }
  await Promise.all(Array.from({ length: runners }, () => runner()));
  return outcomes;
}

/** How much of a failed suite's log is repeated after the summary: vitest's "Failed Tests" report and its totals. */
const FAILURE_TAIL_LINES = 200;

function logTail(suite: string): string {
  const lines = readFileSync(path.join(logDir, `${logName(suite)}.log`), "utf8").split("\n");
  return lines.slice(-FAILURE_TAIL_LINES).join("\n");
}

/** Lines of a failure report kept after each failing test's headline. */
const HEADLINE_CONTEXT_LINES = 8;
/** Failing tests listed per suite at most. */
const MAX_HEADLINES = 6;

/**
 * The failing tests of a log, each with the first lines of its report: vitest's ` FAIL  file > test` blocks and
 * mocha's numbered `N) test` entries after `N failing`.
 */
function failureHeadlines(log: string): string[] {
  // CI may force colours on: the escapes would hide the markers.
  const lines = stripVTControlCharacters(log).split("\n");
  const failingAt = lines.findIndex((line) => /^\s*\d+ failing\s*$/.test(line));
  const isHeadline = (line: string, index: number) =>
    /^\s*FAIL\s/.test(line) || (failingAt >= 0 && index > failingAt && /^\s*\d+\) /.test(line));
  const out: string[] = [];
  let shown = 0;
  for (let index = 0; index < lines.length && shown < MAX_HEADLINES; index++) {
    if (!isHeadline(lines[index]!, index)) continue;
    shown++;
    const report = lines
      .slice(index + 1)
      .filter((line) => line.trim().length > 0 && !/^[\s⎯-]+$/.test(line))
      .slice(0, HEADLINE_CONTEXT_LINES);
    out.push(lines[index]!.trim(), ...report.map((line) => `    ${line.trim().slice(0, 300)}`));
  }
  return out.length > 0 ? out : ["(no test headline found: see the suite's log above)"];
}

mkdirSync(logDir, { recursive: true });
const sequential = process.env.SUITES_SEQUENTIAL === "1";
const outcomes = await runQueue(sequential ? 1 : RUNNERS);
const failed = outcomes.filter((outcome) => !outcome.ok);
for (const { suite } of failed) {
  process.stdout.write(`\n===== the end of ${suite}'s log (${logName(suite)}.log), again =====\n`);
  process.stdout.write(`${logTail(suite)}\n`);
}
console.log("\n===== suites =====");
for (const { suite, ok, seconds } of outcomes)
  console.log(`${ok ? "ok    " : "FAILED"} ${suite.padEnd(18)} ${seconds} s`);
// Last, since a CI log is often read from its last lines only: which tests failed, with the start of each report.
for (const { suite } of failed) {
  console.log(`\n===== failed in ${suite} =====`);
  console.log(failureHeadlines(readFileSync(path.join(logDir, `${logName(suite)}.log`), "utf8")).join("\n"));
}
process.exit(failed.length === 0 ? 0 : 1);
