/**
 * `npm test` after compile and lint: every suite, in two lanes that run at once. Each stack suite starts its own
 * stack on its own ports and state folder (test/support/testStackOptions.ts and each suite's globalSetup), and the
 * contract suite builds its coverage into its own artifacts folder (HARDHAT_ARTIFACTS_DIR), so no two suites share
 * anything but the CPU. The lanes are balanced on measured times (CI at bad4888 on a slow host: lane 1's suites
 * 1,874 s, lane 2's 1,774 s less the 125 s recovery.test.ts no longer waits twice, plus openapi and fuzz, 255 s) so
 * the whole run takes about half the sequential time; CI's budget is 30 minutes.
 *
 * A lane stops at its first failing suite; the other lane runs on, so one run reports every failing lane. Each
 * suite's output goes to `.local/test-logs/<suite>.log` and is printed whole when the suite ends, so the log of a
 * run reads suite by suite instead of interleaved. Exit code 1 when any suite failed.
 *
 * `SUITES_SEQUENTIAL=1` runs the same suites one after another (for a machine with one core).
 */
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const logDir = path.join(root, ".local", "test-logs");

/** npm scripts, in lanes; each lane's order puts its longest, most CPU-hungry suite first. */
const LANES: readonly (readonly string[])[] = [
  [
    "test:contracts",
    "test:shared",
    "test:worker",
    "test:api:unit",
    "test:indexer",
    "test:deploy",
    "test:webhooks",
    "test:web",
  ],
  ["test:api", "test:multigw", "test:chaos", "test:chainfaults", "test:openapi", "test:fuzz"],
];

type Outcome = { suite: string; ok: boolean; seconds: number };

function runSuite(suite: string): Promise<Outcome> {
  const started = Date.now();
  const logFile = path.join(logDir, `${suite.replaceAll(":", "-")}.log`);
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

async function runLane(lane: readonly string[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const suite of lane) {
    const outcome = await runSuite(suite);
    outcomes.push(outcome);
    if (!outcome.ok) break;
  }
  return outcomes;
}

mkdirSync(logDir, { recursive: true });
const sequential = process.env.SUITES_SEQUENTIAL === "1";
const lanes = sequential ? [LANES.flat()] : LANES;
const outcomes = (await Promise.all(lanes.map(runLane))).flat();
const skipped = lanes.flat().filter((suite) => !outcomes.some((outcome) => outcome.suite === suite));
console.log("\n===== suites =====");
for (const { suite, ok, seconds } of outcomes)
  console.log(`${ok ? "ok    " : "FAILED"} ${suite.padEnd(18)} ${seconds} s`);
for (const suite of skipped) console.log(`not run ${suite} (an earlier suite of its lane failed)`);
process.exit(outcomes.every((outcome) => outcome.ok) && skipped.length === 0 ? 0 : 1);
