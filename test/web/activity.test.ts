import type { Model, WalletActivity } from "@credit-metered/client/http";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, waitForJobStatus, type Job } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { WEB_TEST_PORT_BASE } from "./globalSetup.js";
import { openSignedInBrowser, screenshot, type TestBrowser } from "./support/browser.js";
import { startOwnWorker } from "./support/ownWorker.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// The pictures of the web app (issue 13.4): Activity charts, the Models page with the trust figures, and the jobs
// page paged and filtered like the API. The demo wallet's jobs are made here through the real API (this file runs
// first, so they are all the wallet has), and every figure the pages draw is checked against the API's own answer.

const SETTLED_RUNS: { model: string; runs: number }[] = [
  { model: "llama-3.2-3b-instruct", runs: 5 },
  { model: "qwen3-1.7b", runs: 4 },
  { model: "llama-3.1-8b-instruct", runs: 2 },
];
const PAGE_SIZE = 10;

let browser: TestBrowser;
let page: Page;
/** Every job of the demo key, newest first, as `GET /v1/jobs` lists them once they all ended. */
let apiJobs: Job[];
let failingModel: string;

async function allJobs(apiKey: string): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | null = null;
  do {
    const response = await rawRequest("GET", `/v1/jobs?limit=100${cursor ? `&before=${cursor}` : ""}`, { apiKey });
    const body = response.json<{ data: Job[]; has_more: boolean; next_cursor: string | null }>();
    jobs.push(...body.data);
    cursor = body.has_more ? body.next_cursor : null;
  } while (cursor);
  return jobs;
}

/** What the web app's backend answers the signed-in page (same origin, session cookie). */
function appGet<T>(path: string): Promise<T> {
  return page.evaluate(async (url) => (await fetch(url, { credentials: "same-origin" })).json(), path) as Promise<T>;
}

beforeAll(async () => {
  const { demo } = stackInfo();
  ({ model: failingModel } = await startOwnWorker("web-flaky", WEB_TEST_PORT_BASE + 33, demo.apiKey, {
    fault: "fail_after_first_token",
  }));
  const jobIds: string[] = [];
  for (const { model, runs } of SETTLED_RUNS) {
    for (let i = 0; i < runs; i++) {
      const response = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: demo.apiKey,
        body: { model, messages: [{ role: "user", content: `Activity ${i}` }], max_tokens: 48 },
      });
      expect(response.status, response.body).toBe(200);
      jobIds.push(String(response.headers["x-service-job-id"]));
    }
  }
  const failed = await rawRequest("POST", "/v1/chat/completions", {
    apiKey: demo.apiKey,
    body: { model: failingModel, messages: [{ role: "user", content: "This one fails" }] },
  });
  expect(failed.status, failed.body).toBe(502);
  for (const jobId of jobIds) await waitForJobStatus(demo.apiKey, jobId, "settled");
  await waitForJobStatus(demo.apiKey, String(failed.headers["x-service-job-id"]), "failed");
  apiJobs = await allJobs(demo.apiKey);

  browser = await openSignedInBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
});

type Activity = WalletActivity;

describe("Activity page", () => {
  it("adds up to what GET /v1/jobs lists: credits spent, jobs, tokens, per model and per outcome", async () => {
    const activity = await appGet<Activity>("/app/activity?days=30");
    const charged = apiJobs.filter((job) => job.status === "settled" || job.status === "disputed");
    expect(activity.totals.jobs).toBe(apiJobs.length);
    expect(activity.totals.credits_charged).toBe(charged.reduce((sum, job) => sum + job.credits_charged, 0));
    expect(activity.totals.completion_tokens).toBe(apiJobs.reduce((sum, job) => sum + job.usage.completion_tokens, 0));
    for (const { model, runs } of SETTLED_RUNS) {
      const entry = activity.by_model.find((candidate) => candidate.model === model);
      expect(entry?.jobs, model).toBe(runs);
      const credits = charged.filter((job) => job.model === model).reduce((sum, job) => sum + job.credits_charged, 0);
      expect(entry?.credits_charged, model).toBe(credits);
    }
    expect(activity.by_outcome).toEqual(
      expect.arrayContaining([
        { status: "settled", jobs: charged.length },
        { status: "failed", jobs: 1 },
      ]),
    );
    // Every job that relayed a token has a first-token time (the failing worker sent one before failing).
    expect(activity.time_to_first_token.reduce((sum, day) => sum + day.jobs, 0)).toBe(apiJobs.length);
  });

  it("draws credits per day and per model, tokens, outcomes and time to first token as charts", async () => {
    await page.getByRole("link", { name: "Activity" }).click();
    await page.getByTestId("chart-ttft").locator(".recharts-bar-rectangle path").first().waitFor();
    const charged = apiJobs.filter((job) => job.status === "settled");
    expect(await page.getByTestId("total-jobs").innerText()).toBe(String(apiJobs.length));
    expect(await page.getByTestId("total-credits").innerText()).toBe(
      String(charged.reduce((sum, job) => sum + job.credits_charged, 0)),
    );
    // Today's stacked bar has one segment per model charged today.
    const perDay = page.getByTestId("chart-credits-per-day");
    expect(await perDay.locator(".recharts-bar-rectangle path").count()).toBe(SETTLED_RUNS.length);
    const perModel = page.getByTestId("chart-credits-per-model");
    // Only models that cost something get a bar (the failing model's job was not charged).
    expect(await perModel.locator(".recharts-bar-rectangle path").count()).toBe(SETTLED_RUNS.length);
    for (const { model } of SETTLED_RUNS) expect(await perModel.innerText()).toContain(model);
    expect(await page.getByTestId("chart-tokens").locator(".recharts-bar-rectangle path").count()).toBe(2);
    const outcomes = page.getByTestId("chart-outcomes");
    expect(await outcomes.locator(".recharts-pie-sector").count()).toBe(2);
    expect(await outcomes.innerText()).toContain("failed (not charged)");
    // Today's median and p95 bars.
    expect(await page.getByTestId("chart-ttft").locator(".recharts-bar-rectangle path").count()).toBe(2);
    await screenshot(page, "activity", { docs: true });
  });
});

type ServiceModel = Model;

describe("Models page", () => {
  it("shows every served model with its price, live workers, latency and trust figures as the API gives them", async () => {
    await page.getByRole("link", { name: "Models" }).click();
    await page.getByTestId("chart-model-latency").locator(".recharts-bar-rectangle").first().waitFor();
    const listed = (await rawRequest("GET", "/v1/models", { apiKey: stackInfo().demo.apiKey })).json<{
      data: ServiceModel[];
    }>().data;
    const cards = page.getByTestId("model-card");
    expect(await cards.count()).toBe(listed.length);
    const flaky = listed.find((model) => model.id === failingModel)!;
    expect(flaky.service.success_rate).toBe(0);
    const card = page.locator(`[data-testid="model-card"][data-model-id="${failingModel}"]`);
    expect(await card.getByTestId("model-success").innerText()).toBe("0 %");
    expect(await card.getByTestId("model-workers").innerText()).toBe(String(flaky.service.active_workers));
    const lite = listed.find((model) => model.id === "llama-3.2-3b-instruct")!;
    const liteCard = page.locator('[data-testid="model-card"][data-model-id="llama-3.2-3b-instruct"]');
    expect(await liteCard.getByTestId("model-price").innerText()).toContain(
      `${lite.service.credits_per_request} credits per request`,
    );
    expect(await liteCard.getByTestId("model-success").innerText()).toBe("100 %");
    expect(await liteCard.getByTestId("model-disputes").innerText()).toBe(
      `${lite.service.disputes_opened} opened · ${lite.service.disputes_upheld} upheld`,
    );
    await screenshot(page, "models", { docs: true });
  });
});

describe("Jobs page", () => {
  const rowIds = async () =>
    page.getByTestId("job-row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job-id")));

  it("pages like GET /v1/jobs: newest first, Older and Newer follow the cursors", async () => {
    await page.getByRole("link", { name: "Jobs" }).click();
    await page.getByTestId("job-row").first().waitFor();
    await page.getByTestId("jobs-page-size").selectOption(String(PAGE_SIZE));
    await waitFor("first page", async () => (await rowIds()).length === PAGE_SIZE);
    expect(await rowIds()).toEqual(apiJobs.slice(0, PAGE_SIZE).map((job) => job.id));
    await screenshot(page, "jobs-page-1", { docs: true });

    await page.getByTestId("jobs-older").click();
    await waitFor("second page", async () => (await page.getByTestId("jobs-page").innerText()) === "Page 2");
    await waitFor("second page rows", async () => (await rowIds())[0] === apiJobs[PAGE_SIZE]!.id);
    expect(await rowIds()).toEqual(apiJobs.slice(PAGE_SIZE, 2 * PAGE_SIZE).map((job) => job.id));
    expect(await page.getByTestId("jobs-older").isDisabled()).toBe(apiJobs.length <= 2 * PAGE_SIZE);

    await page.getByTestId("jobs-newer").click();
    await waitFor("back on page 1", async () => (await rowIds())[0] === apiJobs[0]!.id);
    expect(await page.getByTestId("jobs-newer").isDisabled()).toBe(true);
  });

  it("filters by status and by model with the API's values", async () => {
    await page.getByTestId("jobs-status-filter").selectOption("failed");
    const failed = apiJobs.filter((job) => job.status === "failed").map((job) => job.id);
    await waitFor("failed jobs only", async () => JSON.stringify(await rowIds()) === JSON.stringify(failed));
    await screenshot(page, "jobs-filtered-failed", { docs: true });

    await page.getByTestId("jobs-status-filter").selectOption("");
    await page.getByTestId("jobs-model-filter").selectOption("qwen3-1.7b");
    const byApi = (
      await rawRequest("GET", "/v1/jobs?model=qwen3-1.7b&limit=100", { apiKey: stackInfo().demo.apiKey })
    ).json<{ data: Job[] }>().data;
    await waitFor(
      "qwen jobs only",
      async () => JSON.stringify(await rowIds()) === JSON.stringify(byApi.map((job) => job.id)),
    );
    expect(byApi).toHaveLength(SETTLED_RUNS.find((run) => run.model === "qwen3-1.7b")!.runs);
  });

  it("after= returns the jobs just newer than the cursor, newest first, and next_cursor continues that way", async () => {
    const cursor = apiJobs[5]!.id;
    const page = await appGet<{ data: { id: string }[]; has_more: boolean; next_cursor: string | null }>(
      `/app/jobs?limit=3&after=${cursor}`,
    );
    expect(page.data.map((job) => job.id)).toEqual(apiJobs.slice(2, 5).map((job) => job.id));
    expect(page.has_more).toBe(true);
    expect(page.next_cursor).toBe(apiJobs[2]!.id);
  });

  it("never sends a query the /app backend refuses: no read of the Activity, Models or Jobs pages was answered 400", () => {
    expect(browser.refusedAppReads()).toEqual([]);
  });

  it("error: the backend refuses an unknown status filter in the API's error format", async () => {
    const answer = await appGet<{ error: { code: string; param: string } }>("/app/jobs?status=lost");
    expect(answer.error.code).toBe("invalid_request");
    expect(answer.error.param).toBe("status");
  });
});
