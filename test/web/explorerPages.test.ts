import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { openBrowser, screenshot, type TestBrowser } from "./support/browser.js";
import { failJob, openUnroutedJob, settledJob, upheldDispute } from "./support/jobs.js";
import { startOwnWorker } from "./support/ownWorker.js";
import { WEB_TEST_PORT_BASE } from "./globalSetup.js";

// The explorer page (/tx/<hash>) needs no sign-in: it reads the transaction from the chain and decodes the
// product's events. Settlement and escrow lock are covered in webApp.test.ts; here disputes and refunds.

let browser: TestBrowser;
let page: Page;
let client: ClientWallet;

beforeAll(async () => {
  browser = await openBrowser();
  page = browser.page;
  client = await createClientWallet({ usdg: 2n });
});

afterAll(async () => {
  await browser?.close();
});

async function openExplorer(hash: string): Promise<void> {
  await page.goto(`${stackInfo().webUrl}tx/${hash}`);
  await page.getByTestId("tx-headline").waitFor();
}

const fact = (label: string) => page.locator(`[data-label="${label}"] dd`).first().innerText();

describe("explorer page", () => {
  let disputed: { jobId: string; disputeTx: string; resolveTx: string; charged: string };

  beforeAll(async () => {
    // Upholding the dispute slashes the job's worker: a worker of this file's own.
    const { model } = await startOwnWorker("explorer-dispute", WEB_TEST_PORT_BASE + 31, client.apiKey);
    const job = await settledJob(client, model);
    const { disputeTx, resolveTx } = await upheldDispute(client, job.jobId);
    await openExplorer(job.settlementTx);
    disputed = { jobId: job.jobId, disputeTx, resolveTx, charged: await fact("Charged") };
  });

  it("decodes a dispute: both hashes and the arbitration deadline", async () => {
    await openExplorer(disputed.disputeTx);
    expect(await page.getByTestId("tx-headline").innerText()).toContain("Dispute opened");
    expect(await fact("Job id")).toBe(disputed.jobId);
    expect(await fact("Client's hash")).toBe(`sha256:${"1".repeat(64)}`);
    expect(await fact("Worker's proof hash")).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await fact("Arbitration deadline")).toMatch(/^\d{4}-\d\d-\d\dT/);
    await screenshot(page, "13-explorer-dispute-opened");
  });

  it("decodes an upheld dispute: the charge restored to the wallet and the worker slashed", async () => {
    await openExplorer(disputed.resolveTx);
    expect(await page.getByTestId("tx-headline").innerText()).toContain("Dispute upheld");
    expect(await fact("Credits restored")).toBe(disputed.charged);
    expect(await fact("Worker stake slashed")).toMatch(/^[1-9][\d.]* SVC$/);
    expect(await page.getByText("Escrow dispute closed").count()).toBe(1);
    await screenshot(page, "14-explorer-dispute-upheld");
  });

  it("decodes a failed job: the escrow released back to the wallet", async () => {
    const { jobId, jobKey, opener } = await openUnroutedJob(client);
    const failTx = await failJob(opener, jobKey);
    await openExplorer(failTx);
    expect(await page.getByTestId("tx-headline").innerText()).toContain("Refund (job failed)");
    expect(await fact("Job id")).toBe(jobId);
    expect(await fact("Escrow release (returned)")).toBe("2 credits (0.02 USDG)");
    await screenshot(page, "15-explorer-job-failed");
  });
});
