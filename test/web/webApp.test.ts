import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountOf, publicClient } from "../support/chain.js";
import { openaiFor, rawRequest } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { waitUntilKeyAccepted } from "../support/wallets.js";
import { openBrowser, screenshot, type TestBrowser } from "./support/browser.js";
import { startFailingReceiver } from "./support/failingReceiver.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// One browser session walks through the app as the demo wallet's owner would, page by page; each test builds on
// the previous one (signed in → funded → key → webhook → revoked …), and every page is saved as a screenshot.

let browser: TestBrowser;
let page: Page;
let receiver: Awaited<ReturnType<typeof startFailingReceiver>>;
const state: { apiKey?: string; jobId?: string; settlementTx?: string; proofHash?: string } = {};

const text = (testId: string) => page.getByTestId(testId).innerText();

beforeAll(async () => {
  browser = await openBrowser();
  page = browser.page;
  receiver = await startFailingReceiver();
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

describe("web application", () => {
  it("connects the development wallet and signs in with Ethereum", async () => {
    const { webUrl, demo } = stackInfo();
    await page.goto(webUrl!);
    await page.getByRole("heading", { name: "Sign in with your wallet" }).waitFor();
    await screenshot(page, "01-connect");
    await page.getByTestId("connect-dev-wallet").click();
    await page.getByTestId("sign-in").click();
    await page.getByTestId("credits-available").waitFor();
    expect((await text("wallet-address")).toLowerCase()).toContain(demo.wallet.slice(0, 8).toLowerCase());
    const cookies = await browser.context.cookies();
    const session = cookies.find((cookie) => cookie.name === "svc_session");
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe("Strict");
    await screenshot(page, "02-balance");
  });

  it("shows the chain's balance: available, locked and last top-up", async () => {
    const onChain = await accountOf(stackInfo().demo.wallet);
    expect(await text("credits-available")).toBe(`${Number(onChain.available).toLocaleString("en-US")} credits`);
    expect(await text("credits-locked")).toBe(`${Number(onChain.locked).toLocaleString("en-US")} credits`);
  });

  it("funds the suggested 1 USDG (the smallest funding) with one permit signature and one deposit transaction", async () => {
    const wallet = stackInfo().demo.wallet;
    const before = await accountOf(wallet);
    await page.getByRole("link", { name: "Fund" }).click();
    await page.getByTestId("mint-test-usdg").click();
    await waitFor("test USDG minted", async () => (await text("wallet-usdg")).startsWith("100.00"));
    expect(await page.getByTestId("deposit-amount").inputValue()).toBe("1");
    await page.getByTestId("deposit").click();
    await page.getByTestId("deposit-done").waitFor({ timeout: 60_000 });
    const after = await accountOf(wallet);
    expect(after.available - before.available).toBe(100n);
    const tx = await page.getByTestId("deposit-done").locator("a").getAttribute("data-tx");
    const receipt = await publicClient().getTransactionReceipt({ hash: tx as `0x${string}` });
    expect(receipt.to?.toLowerCase()).toBe(stackInfo().contracts.creditEscrow.toLowerCase());
    await waitFor("balance shows the deposit", async () =>
      (await text("credits-available")).startsWith(Number(after.available).toLocaleString("en-US")),
    );
    await screenshot(page, "03-fund");
  });

  it("creates an API key in the browser, shows it once, and the key serves a real chat completion", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByTestId("key-status").waitFor();
    await page.getByTestId("create-key").click();
    const value = page.getByTestId("new-key-value");
    await value.waitFor({ timeout: 60_000 });
    const apiKey = await value.innerText();
    expect(apiKey).toMatch(/^svc_live_[A-Za-z0-9]{32}$/);
    state.apiKey = apiKey;
    await waitFor("status active", async () => (await text("key-status")) === "Active");
    await screenshot(page, "04-settings-new-key");

    await waitUntilKeyAccepted(apiKey);
    // A webhook to a receiver that is down, registered before the job so the job's events fail to arrive.
    const created = await rawRequest("POST", "/v1/webhooks", {
      apiKey,
      body: { url: receiver.url, events: ["job.completed"], secret: "web-test-secret-0123456789" },
    });
    expect(created.status, created.body).toBe(201);

    const completion = await openaiFor(apiKey).chat.completions.create({
      model: "llama-3.1-8b-instruct",
      messages: [{ role: "user", content: "Say hello" }],
      max_tokens: 32,
    });
    expect(completion.choices[0]?.message.content?.length ?? 0).toBeGreaterThan(0);
    state.jobId = completion.id.replace(/^chatcmpl-/, "");
  });

  it("sets the low-credit threshold", async () => {
    await page.getByTestId("threshold").fill("250");
    await page.getByTestId("save-threshold").click();
    await page.getByTestId("threshold-saved").waitFor();
    await page.reload();
    // A reload drops the in-page wallet; reconnecting the same wallet resumes the session without a new signature.
    await page.getByTestId("connect-dev-wallet").click();
    await page.getByRole("link", { name: "Settings" }).click();
    await waitFor("threshold shown", async () => (await page.getByTestId("threshold").inputValue()) === "250");
    await screenshot(page, "05-settings-threshold");
  });

  it("shows the failed delivery with its attempts and replays it once the receiver is fixed", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    // The page reads the webhooks and the deliveries in two requests sent together: the delivery's failure and the
    // webhook's (one statement, api/webhooks/runDeliveries.ts) can fall between them, so both are waited for.
    await waitFor(
      "a failed delivery, its webhook shown failed",
      async () => {
        await page.getByRole("link", { name: "Balance" }).click();
        await page.getByRole("link", { name: "Webhooks" }).click();
        await page.getByTestId("webhook-status").first().waitFor();
        return (
          (await page.getByTestId("failed-delivery").count()) > 0 &&
          (await page.getByTestId("webhook-status").first().innerText()) === "failed"
        );
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    const delivery = page.getByTestId("failed-delivery").first();
    expect(await delivery.getByTestId("attempt-status").count()).toBe(5);
    expect(await delivery.getByTestId("attempt-status").first().innerText()).toBe("500");
    await screenshot(page, "06-webhooks-failed");

    receiver.heal();
    await page.getByTestId("replay-all").click();
    await page.getByTestId("replayed").waitFor();
    await waitFor("the replay delivered", async () => receiver.received.some((r) => r.status === 200));
    await waitFor(
      "the webhook shown active again",
      async () => {
        await page.getByRole("link", { name: "Balance" }).click();
        await page.getByRole("link", { name: "Webhooks" }).click();
        await page.getByTestId("webhook-status").first().waitFor();
        return (await page.getByTestId("webhook-status").first().innerText()) === "active";
      },
      { timeoutMs: 10_000, intervalMs: 500 },
    );
    await screenshot(page, "07-webhooks-replayed");
  });

  it("lists the job with its model, charge, worker and transaction links", async () => {
    await page.getByRole("link", { name: "Jobs" }).click();
    const row = page.locator(`[data-job-id="${state.jobId}"]`);
    await waitFor(
      "the settled job in the list",
      async () => {
        await page.getByRole("link", { name: "Balance" }).click();
        await page.getByRole("link", { name: "Jobs" }).click();
        return (await row.count()) === 1 && (await row.innerText()).includes("settled");
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const rowText = await row.innerText();
    expect(rowText).toContain("llama-3.1-8b-instruct");
    expect(rowText).toContain("8 credits");
    const job = await rawRequest("GET", `/v1/jobs/${state.jobId}`, { apiKey: state.apiKey! });
    const onChain = job.json<{ on_chain: { settlement_tx: string; proof_hash: string } }>().on_chain;
    state.settlementTx = onChain.settlement_tx;
    state.proofHash = onChain.proof_hash;
    expect(await row.locator(`a[data-tx="${onChain.settlement_tx}"]`).count()).toBe(1);
    await screenshot(page, "08-jobs");
  });

  it("decodes the settlement on the explorer page: release, worker and treasury transfers, proof hash", async () => {
    await page.locator(`[data-job-id="${state.jobId}"]`).locator(`a[data-tx="${state.settlementTx}"]`).click();
    await page.getByTestId("tx-headline").waitFor();
    expect(page.url()).toContain(`/tx/${state.settlementTx}`);
    expect(await text("tx-headline")).toContain("Settlement");
    const fact = (label: string) => page.locator(`[data-label="${label}"] dd`).first().innerText();
    expect(await fact("Escrow release")).toMatch(/credits/);
    expect(await fact("Charged")).toBe("8 credits (0.08 USDG)");
    expect(await fact("Transfer to worker")).toBe("0.072 USDG");
    expect(await fact("Transfer to treasury")).toBe("0.008 USDG");
    expect(await fact("Verified proof hash")).toBe(state.proofHash);
    const transfers = await page.getByText("Stablecoin transfers").locator("..").innerText();
    expect(transfers).toContain("escrow");
    expect(transfers).toContain("worker");
    // Spec, settlement rule 6: the settlement transaction shows the transfer to the protocol treasury.
    expect(transfers).toContain("treasury");
    await screenshot(page, "09-explorer-settlement");
  });

  it("decodes the escrow lock on the explorer page: balance debit, lock, tier, job id", async () => {
    const job = await rawRequest("GET", `/v1/jobs/${state.jobId}`, { apiKey: state.apiKey! });
    const escrowTx = job.json<{ on_chain: { escrow_tx: string } }>().on_chain.escrow_tx;
    await page.goto(`${stackInfo().webUrl}tx/${escrowTx}`);
    await page.getByTestId("tx-headline").waitFor();
    expect(await text("tx-headline")).toContain("Escrow lock");
    const fact = (label: string) => page.locator(`[data-label="${label}"] dd`).first().innerText();
    expect(await fact("Job id")).toBe(state.jobId);
    expect(await fact("Tier")).toBe("standard");
    expect(await fact("Balance debit")).toMatch(/^− \d+ credits/);
    await screenshot(page, "10-explorer-escrow");
  });

  it("revokes the key, and the API refuses it with 401", async () => {
    await page.goto(stackInfo().webUrl!);
    await page.getByTestId("connect-dev-wallet").click();
    await page.getByRole("link", { name: "Settings" }).click();
    await waitFor("status active", async () => (await text("key-status")) === "Active");
    await page.getByTestId("revoke-key").click();
    await page.getByTestId("revoke-done").waitFor({ timeout: 60_000 });
    await waitFor("status revoked", async () => (await text("key-status")) === "Revoked");
    await waitFor("the API refuses the revoked key", async () => {
      const response = await rawRequest("GET", "/v1/account", { apiKey: state.apiKey! });
      return response.status === 401;
    });
    const refused = await rawRequest("GET", "/v1/account", { apiKey: state.apiKey! });
    expect(refused.json<{ error: { code: string } }>().error.code).toBe("invalid_api_key");
    await screenshot(page, "11-settings-revoked");
  });

  it("never sends a query the /app backend refuses: no page read was answered 400", () => {
    expect(browser.refusedAppReads()).toEqual([]);
  });

  it("explains an unknown transaction in plain words", async () => {
    await page.goto(`${stackInfo().webUrl}tx/0x${"ab".repeat(32)}`);
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").innerText()).toContain("not on this chain");
    await screenshot(page, "12-explorer-unknown");
  });
});
