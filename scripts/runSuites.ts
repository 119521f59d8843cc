/**
 * `npm test` after compile: lint and every suite, two at a time. Each stack suite starts its own stack on its own
 * ports and state folder (test/support/testStackOptions.ts and each suite's globalSetup), and the contract suite
 * builds its coverage into its own artifacts folder (HARDHAT_ARTIFACTS_DIR), so no two suites share anything but the
 * CPU. Two runners take the next suite from one queue, longest first (CI's times at 68d1e66, beside SUITES), so the
 * run ends about when the sequential time split in two does, whatever the suites' times turn out to be on the day:
 * fixed lanes measured on one run ended 200 s apart on the next (lane 1 1,824 s, lane 2 1,623 s). Lint is first in
 * the queue, beside the API suite's stack start, and the contract suite waits for it, because that suite's coverage
 * build regenerates TypeChain's types, which `tsc` reads. CI's budget is 30 minutes.
 *
 * A failing suite stops nothing: the suites share nothing but the CPU, so one run reports every failing suite. Each
 * suite's output goes to `.local/test-logs/<suite>.log` and is printed whole when the suite ends, so the log of a run
 * reads suite by suite instead of interleaved; after the summary, the end of each failed suite's log
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

/**
 * npm scripts, longest first after lint; their seconds in CI at 68d1e66, each beside another suite (a suite's time
 * moves with what runs next to it): lint 134, api 903, contracts 382, web 298, chaos 280, api:unit 240, chainfaults
 * 236, indexer 221, webhooks 204, fuzz 187, multigw 143, worker 140, shared 40, deploy 39.
 */
const SUITES: readonly string[] = [
  "lint",
  "test:api",
  "test:contracts",
  "test:web",
  "test:chaos",
  "test:api:unit",
  "test:chainfaults",
  "test:indexer",
  "test:webhooks",
  "test:fuzz",
  "test:multigw",
  "test:worker",
  "test:shared",
  "test:deploy",
];
/** Suites that start only once another has ended. */
const AFTER: Readonly<Record<string, string>> = { "test:contracts": "lint" };
const RUNNERS = 2;

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

/** Runs the queue with `runners` suites at a time, each runner taking the next suite when its last one ends. */
async function runQueue(runners: number): Promise<Outcome[]> {
  const queue = [...SUITES];
  const ended = new Map<string, PromiseWithResolvers<void>>(queue.map((suite) => [suite, Promise.withResolvers()]));
  const outcomes: Outcome[] = [];
  const runner = async () => {
    for (let suite = queue.shift(); suite !== undefined; suite = queue.shift()) {
      const before = AFTER[suite];
      if (before !== undefined) await ended.get(before)?.promise;
      outcomes.push(await runSuite(suite));
      ended.get(suite)?.resolve();
    }
  };
  await Promise.all(Array.from({ length: runners }, runner));
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
const outcomes = await runQueue(process.env.SUITES_SEQUENTIAL === "1" ? 1 : RUNNERS);
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
