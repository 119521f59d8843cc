import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chatRequestSchema } from "../../api/completions/requestSchema.js";
import { createWebhookBody } from "../../api/webhooks/webhookSchemas.js";
import { createChainReader } from "../../scripts/verify/chainReader.js";
import { auditEscrow } from "../../scripts/verify/auditEscrow.js";
import { rawRequest, waitForJobStatus } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet } from "../support/wallets.js";
import { startHealthSampler } from "./support/eventLoop.js";
import type { LiveValues } from "./support/fuzzCase.js";
import {
  PROPERTY_SHARES,
  propertyArbitraries,
  type GeneratorSources,
  type PropertyName,
} from "./support/generators.js";
import { Oracles } from "./support/oracles.js";
import {
  EVENT_LOOP_BOUND_MS,
  evaluate,
  formatFailure,
  fuzzProperty,
  type Failure,
  type FuzzContext,
  type RunStats,
} from "./support/runner.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// Requests per run (spread over the properties by share); FUZZ_RUNS=20000 for a long run. FUZZ_SEED replays one.
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
// Local triage only: `;`-separated regular expressions of failure signatures to ignore (never set in CI).
const SKIP = (process.env.FUZZ_SKIP ?? "")
  .split(";")
  .filter((pattern) => pattern.length > 0)
  .map((pattern) => new RegExp(pattern));
const MAX_MESSAGES = 1024;

const stats: RunStats = {
  requests: 0,
  worstLagMs: 0,
  worstWallMs: 0,
  worstBlamedLagMs: 0,
  noisyWindows: 0,
  byProperty: {},
};
const failures: Failure[] = [];
let ctx: FuzzContext;
let sources: GeneratorSources;
let sampler: ReturnType<typeof startHealthSampler>;
let arbitraries: ReturnType<typeof propertyArbitraries> | undefined;

function chatJson(model: string, extra: Record<string, unknown> = {}) {
  return { model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 8, ...extra };
}

beforeAll(async () => {
  const { apiUrl } = stackInfo();
  const [funded, broke] = await Promise.all([createClientWallet({ usdg: 1_000n }), createClientWallet({ usdg: 0n })]);
  const documentText = await (await fetch(`${apiUrl}/v1/openapi.json`)).text();
  const models = (await rawRequest("GET", "/v1/models", { apiKey: funded.apiKey }))
    .json<{ data: { id: string }[] }>()
    .data.map((model) => model.id);
  expect(models.length).toBeGreaterThan(0);
  const live: LiveValues = { keys: { funded: funded.apiKey, broke: broke.apiKey }, ownJobs: [], webhooks: [] };
  // A few jobs of the funded key for the job and dispute requests to refer to.
  for (const model of models.slice(0, 3)) {
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: funded.apiKey, body: chatJson(model) });
    expect(response.status, response.body).toBe(200);
    live.ownJobs.push(String(response.headers["x-service-job-id"]));
  }
  sources = {
    chatBody: z.toJSONSchema(chatRequestSchema(MAX_MESSAGES), { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >,
    webhookBody: z.toJSONSchema(createWebhookBody, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
    openapi: JSON.parse(documentText) as GeneratorSources["openapi"],
    models,
  };
  ctx = {
    apiUrl,
    oracles: new Oracles(documentText, models),
    live,
    stats,
    skip: SKIP,
    known: new Set(),
    resets: 0,
    observe: (fuzzCase, request, answer) => {
      const jobId = answer.headers["x-service-job-id"]?.[0];
      if (
        fuzzCase.key === "funded" &&
        request.target.startsWith("/v1/chat/completions") &&
        answer.status === 200 &&
        jobId
      )
        live.ownJobs.push(jobId);
      if (
        fuzzCase.key === "funded" &&
        request.method === "POST" &&
        request.target === "/v1/webhooks" &&
        answer.status === 201
      ) {
        const id = (JSON.parse(answer.text) as { id?: unknown }).id;
        if (typeof id === "string") live.webhooks.push(id);
      }
    },
  };
  sampler = startHealthSampler(apiUrl);
  console.log(
    `[fuzz] seed ${SEED} (FUZZ_SEED=${SEED} replays), ${RUNS} generated requests, models ${models.join(", ")}`,
  );
});

afterAll(async () => {
  const health = await sampler?.stop();
  const lines = [
    `[fuzz] ${stats.requests} requests sent (${RUNS} generated, the rest replays and shrinking), seed ${SEED}`,
    `[fuzz] per property: ${Object.entries(stats.byProperty)
      .map(([name, count]) => `${name} ${count}`)
      .join(", ")}`,
    `[fuzz] worst event-loop hold seen ${Math.round(stats.worstLagMs)} ms of main-thread CPU (wall-clock delay ${Math.round(stats.worstWallMs)} ms); worst blamed on one request ${Math.round(stats.worstBlamedLagMs)} ms (bound ${EVENT_LOOP_BOUND_MS} ms); ${stats.noisyWindows} noisy window(s) where GET /healthz exceeded it too (replayed)`,
    `[fuzz] worst /healthz latency seen by a concurrent client ${Math.round(health?.worstMs ?? 0)} ms over ${health?.samples ?? 0} probes`,
    `[fuzz] ${ctx?.resets ?? 0} large upload(s) reset by the server before any answer (not blamed)`,
    `[fuzz] ${failures.length} distinct failure(s)`,
  ];
  console.log(lines.join("\n"));
});

describe("fuzzing the API from its own schemas: valid, mutated and hostile requests", () => {
  for (const [name, share] of Object.entries(PROPERTY_SHARES) as [PropertyName, number][]) {
    it(`${name}: never a 5xx, errors in the spec's format with the spec's status, the event loop within ${EVENT_LOOP_BOUND_MS} ms`, async () => {
      arbitraries ??= propertyArbitraries(sources);
      const arbitrary = arbitraries[name];
      const found = await fuzzProperty(ctx, name, arbitrary, Math.max(1, Math.round(RUNS * share)), SEED);
      failures.push(...found);
      const report = found.map((failure) => formatFailure(failure, ctx.live)).join("\n\n");
      expect(found.length, report).toBe(0);
    });
  }

  it("a dispute reads back at once: GET /v1/jobs/{id} says disputed right after dispute_opened", async () => {
    const model = sources.models[0]!;
    const runs = Math.max(2, Math.round(RUNS / 600));
    const problems: string[] = [];
    for (let run = 0; run < runs; run++) {
      const completion = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: ctx.live.keys.funded,
        body: chatJson(model),
      });
      expect(completion.status, completion.body).toBe(200);
      const jobId = String(completion.headers["x-service-job-id"]);
      ctx.live.ownJobs.push(jobId);
      await waitForJobStatus(ctx.live.keys.funded, jobId, "settled");
      const wrongHash = `sha256:${createHash("sha256").update(`not what was received ${run}`).digest("hex")}`;
      const evaluation = await evaluate(
        ctx,
        {
          method: "POST",
          target: `/v1/jobs/${jobId}/dispute`,
          headers: [
            ["Authorization", "Bearer {{key:funded}}"],
            ["Content-Type", "application/json"],
          ],
          body: Buffer.from(JSON.stringify({ received_output_hash: wrongHash })),
          key: "funded",
          intent: { kind: "none" },
          label: "dispute/read-your-write",
        },
        "dispute read-back",
      );
      problems.push(...evaluation.violations.map((violation) => `${violation.kind}: ${violation.detail}`));
      if (evaluation.answer?.status !== 200) continue;
      const job = await rawRequest("GET", `/v1/jobs/${jobId}`, { apiKey: ctx.live.keys.funded });
      const status = job.json<{ status: string }>().status;
      if (status !== "disputed") problems.push(`${jobId}: dispute_opened, then GET /v1/jobs/{id} says ${status}`);
    }
    expect(problems).toEqual([]);
  });

  it("after the run the service is healthy: /healthz, /readyz, every model listed, a completion served", async () => {
    const { apiUrl } = stackInfo();
    expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
    await waitFor("the gateway is ready", async () => (await fetch(`${apiUrl}/readyz`)).status === 200, {
      timeoutMs: 30_000,
    });
    const listed = (await rawRequest("GET", "/v1/models", { apiKey: ctx.live.keys.funded }))
      .json<{ data: { id: string }[] }>()
      .data.map((model) => model.id);
    expect(listed.sort()).toEqual([...sources.models].sort());
    const completion = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: ctx.live.keys.funded,
      body: chatJson(sources.models[0]!),
    });
    expect(completion.status, completion.body).toBe(200);
  });

  it("conservation: every wallet replays to its escrow state, nothing stays locked, the escrow holds what it owes", async () => {
    const { rpcUrl, deploymentsFile } = stackInfo();
    const reader = createChainReader(rpcUrl, deploymentsFile);
    // Every job of the run ends (settled, failed or refunded after the 8 s job timeout) before the audit.
    await waitFor(
      "no credits locked",
      async () => (await auditEscrow(reader)).wallets.every((wallet) => wallet.locked === 0n),
      {
        timeoutMs: 60_000,
        intervalMs: 1_000,
      },
    );
    const audit = await auditEscrow(reader, { requireUnlocked: true });
    console.log(
      `[fuzz] conservation: ${audit.wallets.length} wallets, escrow holds ${audit.held} units, owes ${audit.owed} (reserve ${audit.reserve})`,
    );
    expect(audit.wallets.length).toBeGreaterThanOrEqual(2);
    expect(audit.problems).toEqual([]);
  });
});
