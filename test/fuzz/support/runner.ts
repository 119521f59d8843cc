import fc from "fast-check";
import { readLoopHold, type LoopHold } from "../../support/loopHold.js";
import { waitForHealthy } from "./eventLoop.js";
import { matchTemplate, resolveCase, type FuzzCase, type LiveValues } from "./fuzzCase.js";
import { PROTOCOL_STATUSES, type Oracles, type Violation } from "./oracles.js";
import { RawReset, RawTimeout, headOf, sendRaw, type RawAnswer, type RawRequest } from "./rawHttp.js";

/**
 * Issue 11: no single request holds the event loop for more than ~50 ms, measured as the gateway's main-thread CPU
 * (test/support/loopHold.ts `LoopHold`): on a host shared with other suites the wall-clock delay of the same request ran from
 * 28 ms quiet to 50–270 ms (CI, a 900 KB body), the difference being time the host did not run the gateway.
 */
export const EVENT_LOOP_BOUND_MS = 50;
/** A request without a complete answer by then is a hang (the spec's job timeout is far below; tests use 8 s). */
const ANSWER_TIMEOUT_MS = 30_000;
/** Replays that must all exceed the bound too before a request is blamed (the machine is shared and busy). */
const CONFIRM_REPLAYS = 2;
/**
 * Rounds of "replay, then the same measure around a trivial request (GET /healthz)" while that control is over the
 * bound too: a window in which even /healthz holds the loop past the bound measures the machine or the gateway's
 * background work (a GC, a sweep), not the request.
 */
const NOISE_ROUNDS = 3;
/** Pause before a noise round, so a burst of background work can pass. */
const NOISE_PAUSE_MS = 500;
/**
 * Delays this long are rarely scheduling noise: one replay confirms them instead of CONFIRM_REPLAYS and the noise
 * rounds (each replay would cost as much again).
 */
const UNAMBIGUOUS_LAG_MS = 2_000;
/** Requests fast-check may spend shrinking one failure before it settles for the smallest found so far. */
const SHRINK_BUDGET = 60;
/** Uploads at least this large may be reset by a server that answered early (see `evaluate`). */
const LARGE_UPLOAD_BYTES = 64 * 1024;
/** Distinct failures one property reports before it stops looking for more. */
const MAX_FAILURES_PER_PROPERTY = 12;

export type Evaluation = {
  request: RawRequest;
  answer?: RawAnswer;
  violations: Violation[];
  /** The event-loop hold blamed on the request (the least of its measurements), ms of main-thread CPU. */
  lagMs: number;
};

export type Failure = { property: string; fuzzCase: FuzzCase; evaluation: Evaluation; signature: string; seed: number };

export type RunStats = {
  requests: number;
  /** Worst hold of the loop in main-thread CPU, ms (what is judged). */
  worstLagMs: number;
  /** Worst wall-clock event-loop delay seen, ms (reported: it includes the host's scheduling). */
  worstWallMs: number;
  worstBlamedLagMs: number;
  /** Measurements in which a trivial control request exceeded the bound too (noise, so the request was replayed). */
  noisyWindows: number;
  byProperty: Record<string, number>;
};

export type FuzzContext = {
  apiUrl: string;
  oracles: Oracles;
  live: LiveValues;
  stats: RunStats;
  /** Called with every answer (collects job and webhook ids for later requests). */
  observe: (fuzzCase: FuzzCase, request: RawRequest, answer: RawAnswer) => void;
  /** `FUZZ_SKIP`: violations whose signature matches one of these are ignored (local triage only). */
  skip: RegExp[];
  /** Signatures of the failures already reported in this run (each defect is reported once, by the first property). */
  known: Set<string>;
  /** Large uploads the server reset before any answer (see sendRaw): counted, not blamed. */
  resets: number;
};

/** Sends one request, measures the event loop around it and judges the answer. */
export async function evaluate(ctx: FuzzContext, fuzzCase: FuzzCase, property: string): Promise<Evaluation> {
  const request = resolveCase(fuzzCase, ctx.live);
  const measured = (hold: LoopHold) => {
    ctx.stats.worstLagMs = Math.max(ctx.stats.worstLagMs, hold.cpuMs);
    ctx.stats.worstWallMs = Math.max(ctx.stats.worstWallMs, hold.wallMs);
    return hold.cpuMs;
  };
  // Every measurement starts with a read that resets the measure: whatever ran since the last read (the suite's
  // set-up, another test's requests, a pause) is not blamed on this request.
  const once = async (): Promise<{ answer?: RawAnswer; error?: string; lagMs: number }> => {
    await readLoopHold(ctx.apiUrl);
    ctx.stats.requests++;
    if (ctx.stats.requests % 250 === 0)
      console.log(
        `[fuzz] ${ctx.stats.requests} requests, worst event-loop hold so far ${Math.round(ctx.stats.worstLagMs)} ms of CPU (${Math.round(ctx.stats.worstWallMs)} ms wall-clock)`,
      );
    ctx.stats.byProperty[property] = (ctx.stats.byProperty[property] ?? 0) + 1;
    let answer: RawAnswer | undefined;
    let error: string | undefined;
    try {
      answer = await sendRaw(ctx.apiUrl, request, ANSWER_TIMEOUT_MS);
    } catch (caught) {
      if (caught instanceof RawReset && (request.body?.length ?? 0) > LARGE_UPLOAD_BYTES) {
        // A server may refuse a large upload (401, 413) and close while the body is still arriving; the reset can
        // then overtake its answer. Counted and printed, not blamed.
        ctx.resets++;
        return { lagMs: measured(await readLoopHold(ctx.apiUrl)) };
      }
      error = caught instanceof RawTimeout ? `no complete answer within ${ANSWER_TIMEOUT_MS} ms` : String(caught);
      if (caught instanceof RawTimeout) await waitForHealthy(ctx.apiUrl, 20 * 60_000);
    }
    const lagMs = measured(await readLoopHold(ctx.apiUrl));
    return { ...(answer ? { answer } : {}), ...(error ? { error } : {}), lagMs };
  };
  const first = await once();
  let lagMs = first.lagMs;
  const lags = [first.lagMs];
  if (lagMs >= UNAMBIGUOUS_LAG_MS) {
    const again = await once();
    lags.push(again.lagMs);
    lagMs = Math.min(lagMs, again.lagMs);
  }
  if (lagMs > EVENT_LOOP_BOUND_MS && lagMs < UNAMBIGUOUS_LAG_MS) {
    for (let replay = 0; replay < CONFIRM_REPLAYS && lagMs > EVENT_LOOP_BOUND_MS; replay++) {
      const again = await once();
      lags.push(again.lagMs);
      lagMs = Math.min(lagMs, again.lagMs);
    }
    for (let round = 0; round < NOISE_ROUNDS && lagMs > EVENT_LOOP_BOUND_MS; round++) {
      const control = await controlLagMs(ctx.apiUrl);
      if (control <= EVENT_LOOP_BOUND_MS) break;
      ctx.stats.noisyWindows++;
      await new Promise((resolve) => setTimeout(resolve, NOISE_PAUSE_MS));
      const again = await once();
      lags.push(again.lagMs);
      lagMs = Math.min(lagMs, again.lagMs);
    }
  }
  ctx.stats.worstBlamedLagMs = Math.max(ctx.stats.worstBlamedLagMs, lagMs);
  const violations: Violation[] = [];
  if (first.error !== undefined) violations.push({ kind: "no-answer", detail: first.error });
  if (first.answer) {
    ctx.observe(fuzzCase, request, first.answer);
    violations.push(...ctx.oracles.check(fuzzCase, request, first.answer));
  }
  if (lagMs > EVENT_LOOP_BOUND_MS)
    violations.push({
      kind: "event-loop",
      detail: `held the gateway's event loop ${lags.map((lag) => `${Math.round(lag)} ms`).join(", then ")} (bound ${EVENT_LOOP_BOUND_MS} ms)`,
    });
  return { request, ...(first.answer ? { answer: first.answer } : {}), violations, lagMs };
}

/** The event-loop hold measured around a trivial request: what the window holds besides any request's own work. */
async function controlLagMs(apiUrl: string): Promise<number> {
  await readLoopHold(apiUrl);
  await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(30_000) });
  return (await readLoopHold(apiUrl)).cpuMs;
}

/** What makes two violations the same defect: its kind, the operation and the status. */
export function signatureOf(
  ctx: FuzzContext,
  fuzzCase: FuzzCase,
  evaluation: Evaluation,
  violation: Violation,
): string {
  const rawPath = evaluation.request.target.split("?")[0] ?? "";
  const status = evaluation.answer?.status;
  // The HTTP server's own answers (431, 417, 413…) come before any route: one defect whatever the path.
  if (violation.kind === "error-format" && status !== undefined && status !== 400 && PROTOCOL_STATUSES.has(status))
    return `${violation.kind} * (any path) → ${status}`;
  // A stall's cause is in the input: the generator branch (e.g. `chat/nested body`) tells two stalls apart.
  const branch = violation.kind === "event-loop" ? ` [${fuzzCase.label.split(";")[0]!.split(" ←")[0]}]` : "";
  if (violation.kind === "wrong-method") return `${violation.kind} * (any documented path) → ${status ?? "none"}`;
  const where =
    matchTemplate(ctx.oracles.templates, rawPath) ??
    (/^\/v\d+(\/|$)/i.test(rawPath) ? "/v<n>/(unknown)" : "(other path)");
  return `${violation.kind} ${fuzzCase.method.toUpperCase()} ${where} → ${evaluation.answer?.status ?? "none"}${branch}`;
}

/**
 * Runs `numRuns` generated requests through the oracles. A failure is shrunk, recorded, and the run goes on with
 * that failure's signature known, so one run reports every distinct failure (up to MAX_FAILURES_PER_PROPERTY),
 * each with its smallest request.
 */
export async function fuzzProperty(
  ctx: FuzzContext,
  property: string,
  arbitrary: fc.Arbitrary<FuzzCase>,
  numRuns: number,
  seed: number,
): Promise<Failure[]> {
  const known = ctx.known;
  const failures: Failure[] = [];
  let remaining = numRuns;
  for (let round = 0; remaining > 0 && failures.length < MAX_FAILURES_PER_PROPERTY; round++) {
    let last: { fuzzCase: FuzzCase; evaluation: Evaluation; signatures: string[] } | undefined;
    let shrinkSteps = 0;
    const roundSeed = seed + round;
    const result = await fc.check(
      fc.asyncProperty(arbitrary, async (fuzzCase) => {
        if (last && ++shrinkSteps > SHRINK_BUDGET) return true;
        let evaluation: Evaluation;
        try {
          evaluation = await evaluate(ctx, fuzzCase, property);
        } catch (error) {
          // A fault of the fuzzer itself is reported like a failure, never swallowed.
          evaluation = {
            request: resolveCase(fuzzCase, ctx.live),
            violations: [
              { kind: "fuzzer-error", detail: error instanceof Error ? (error.stack ?? error.message) : String(error) },
            ],
            lagMs: 0,
          };
        }
        const fresh = evaluation.violations
          .map((violation) => ({ violation, signature: signatureOf(ctx, fuzzCase, evaluation, violation) }))
          .filter(({ signature }) => !known.has(signature) && !ctx.skip.some((pattern) => pattern.test(signature)));
        if (fresh.length === 0) return true;
        last = {
          fuzzCase,
          evaluation: { ...evaluation, violations: fresh.map(({ violation }) => violation) },
          signatures: fresh.map(({ signature }) => signature),
        };
        return false;
      }),
      { numRuns: remaining, seed: roundSeed, endOnFailure: false },
    );
    if (!result.failed || !last) break;
    const failed = last as { fuzzCase: FuzzCase; evaluation: Evaluation; signatures: string[] };
    for (const signature of failed.signatures) known.add(signature);
    failures.push({
      property,
      fuzzCase: failed.fuzzCase,
      evaluation: failed.evaluation,
      signature: failed.signatures[0]!,
      seed: roundSeed,
    });
    remaining -= result.numRuns;
  }
  return failures;
}

/** Long repeats in a text, folded (`«字×6000»`), then cut: a failure report stays readable. */
export function excerpt(text: string, limit = 400): string {
  const folded = text.length > 200_000 ? `${text.slice(0, 100_000)}…` : text;
  const compact = folded.replace(
    /([\s\S]{1,6}?)\1{7,}/gu,
    (run, unit: string) => `«${JSON.stringify(unit).slice(1, -1)}×${run.length / unit.length}»`,
  );
  return compact.length > limit ? `${compact.slice(0, limit)}…` : compact;
}

/** A failure as printed: the shrunk request (method, path, headers, body excerpt) and the answer. */
export function formatFailure(failure: Failure, live: LiveValues): string {
  const { fuzzCase, evaluation } = failure;
  const redact = (value: string) =>
    Object.entries(live.keys).reduce((text, [name, key]) => text.replaceAll(key, `<${name} key>`), value);
  const request = evaluation.request;
  const head = request.rawHead
    ? excerpt(request.rawHead.toString("latin1"), 600)
    : [
        `${request.method} ${excerpt(request.target, 300)}`,
        ...request.headers.map(([name, value]) => `${name}: ${excerpt(value, 200)}`),
      ].join("\n    ");
  const body = request.body
    ? `\n    body (${request.body.length} bytes): ${excerpt(request.body.toString("utf8"))}`
    : "";
  const answer = evaluation.answer
    ? `${evaluation.answer.status} in ${Math.round(evaluation.answer.elapsedMs)} ms, ` +
      `content-type ${evaluation.answer.headers["content-type"]?.[0] ?? "(none)"}` +
      `${evaluation.answer.headers["allow"] ? `, allow ${evaluation.answer.headers["allow"].join(",")}` : ""}\n    ` +
      `${evaluation.answer.body.length === 0 ? "(empty body)" : excerpt(evaluation.answer.text, 500)}`
    : "(none)";
  return [
    `✗ ${failure.signature}   [${fuzzCase.label}; property ${failure.property}, seed ${failure.seed}]`,
    ...evaluation.violations.map((violation) => `  - ${violation.kind}: ${violation.detail}`),
    `  request:\n    ${redact(head)}${redact(body)}`,
    `  intent: ${excerpt(JSON.stringify(fuzzCase.intent), 600)}`,
    `  answer: ${answer}`,
  ].join("\n");
}

/** The head of a request as sent (for reports of protocol-level cases). */
export function describeHead(request: RawRequest, host: string): string {
  return headOf(request, host).toString("latin1");
}
