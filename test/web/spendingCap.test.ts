import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import { contracts, creditEscrowAbi, mined, publicClient, walletClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { openSignedInBrowser, screenshot, type TestBrowser } from "./support/browser.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// The wallet's own hourly spending cap in the web app (Settings): offered when a key is created, explained, set by
// the wallet's own transaction and read back from the escrow. The cap is removed again at the end, since the other
// files of this suite spend with the same demo wallet.

const CAP = 1_000n;

let browser: TestBrowser;
let page: Page;

const text = (testId: string) => page.getByTestId(testId).innerText();

async function capOnChain(): Promise<bigint> {
  const [cap] = await publicClient().readContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "spendingOf",
    args: [stackInfo().demo.wallet],
  });
  return cap;
}

beforeAll(async () => {
  browser = await openSignedInBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  // Whatever happened above, the demo wallet leaves this file without a cap.
  if ((await capOnChain()) !== 0n) {
    await mined(
      await walletClient(localAccount(LOCAL_ACCOUNT_INDEX.demoWallet)).writeContract({
        address: contracts().creditEscrow,
        abi: creditEscrowAbi,
        functionName: "setSpendingCap",
        args: [0n],
        chain: undefined,
      }),
    );
  }
});

describe("hourly spending cap in Settings", () => {
  it("shows no cap by default and says what a cap protects against", async () => {
    expect(await capOnChain()).toBe(0n);
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByTestId("spending-cap-current").waitFor();
    expect(await text("spending-cap-current")).toBe("No cap: your balance is the only limit.");
    const panel = await text("spending-cap-panel");
    expect(panel).toContain("Hourly spending cap");
    expect(panel).toContain("protects your balance if your API key leaks");
    expect(panel).toContain("the gateway's own key is stolen");
    expect(panel).toContain("Only this wallet can change it");
    expect(panel).toContain("402 spending_cap_exceeded");
  });

  it("offers the cap when a key is created, linking to the cap panel", async () => {
    await page.getByTestId("key-status").waitFor();
    await page.getByTestId("create-key").click();
    await page.getByTestId("new-key-value").waitFor({ timeout: 60_000 });
    const offer = page.getByTestId("spending-cap-offer");
    expect(await offer.innerText()).toContain("set an hourly spending cap");
    expect(await offer.innerText()).toContain("None is set unless you choose one.");
    await offer.getByRole("link", { name: "set an hourly spending cap" }).click();
    // The anchor stays on the Settings page (the app routes by path) and brings the panel into view.
    expect(new URL(page.url()).pathname).toMatch(/\/settings$/);
    expect(new URL(page.url()).hash).toBe("#spending-cap");
    await page.getByTestId("spending-cap-input").waitFor();
    expect(await page.getByTestId("spending-cap-panel").isVisible()).toBe(true);
  });

  it("refuses a cap that is not a whole number of credits, without a transaction", async () => {
    await page.getByTestId("spending-cap-input").fill("12.5");
    await page.getByTestId("spending-cap-save").click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByTestId("spending-cap-panel").getByRole("alert").innerText()).toContain(
      "Enter a whole number of credits per hour",
    );
    expect(await capOnChain()).toBe(0n);
  });

  it("sets the hourly cap with the wallet's transaction: the page shows it and the chain reports it", async () => {
    await page.getByTestId("spending-cap-input").fill(CAP.toString());
    await page.getByTestId("spending-cap-save").click();
    await page.getByTestId("spending-cap-done").waitFor({ timeout: 60_000 });
    await waitFor("the cap shown", async () =>
      (await text("spending-cap-current")).startsWith(`Cap: ${CAP} credits per hour`),
    );
    expect(await capOnChain()).toBe(CAP);
    const tx = await page.getByTestId("spending-cap-done").locator("a").getAttribute("data-tx");
    const receipt = await publicClient().getTransactionReceipt({ hash: tx as `0x${string}` });
    expect(receipt.from.toLowerCase()).toBe(stackInfo().demo.wallet.toLowerCase());
    expect(receipt.to?.toLowerCase()).toBe(contracts().creditEscrow.toLowerCase());
    // The picture without the new key's one-time secret: leaving the page and coming back hides it.
    await page.getByRole("link", { name: "Balance" }).click();
    await page.getByRole("link", { name: "Settings" }).click();
    await waitFor(
      "the cap shown again",
      async () =>
        (await page.getByTestId("spending-cap-current").count()) === 1 &&
        (await text("spending-cap-current")).startsWith(`Cap: ${CAP} credits per hour`),
    );
    expect(await page.getByTestId("new-key").count()).toBe(0);
    await screenshot(page, "settings-spending-cap", { docs: true });
  });

  it("removes the cap: the page and the chain report no cap again", async () => {
    await page.getByTestId("spending-cap-panel").getByRole("button", { name: "Remove cap" }).click();
    await waitFor("no cap shown", async () =>
      (await text("spending-cap-current")).startsWith("No cap: your balance is the only limit."),
    );
    expect(await capOnChain()).toBe(0n);
  });
});
