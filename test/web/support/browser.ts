import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { repoRoot } from "../../../scripts/stack/repoRoot.js";
import { stackInfo } from "../../support/stackInfo.js";

/** Debian's Chromium (CI installs it with apt); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const SCREENSHOT_DIR = path.join(repoRoot, "test-results", "web");

export type TestBrowser = {
  context: BrowserContext;
  page: Page;
  /**
   * Every `GET /app/*` answered 400 so far (method, path and query): the backend reads queries strictly (an unknown
   * or malformed parameter is 400), so a page that sends one would show an error instead of its data.
   */
  refusedAppReads: () => string[];
  close: () => Promise<void>;
};

/** A fresh Chromium profile (its own user data dir), one page, clipboard allowed for the copy button. */
export async function openBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), "web-test-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1200, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const refused: string[] = [];
  context.on("response", (response) => {
    const url = new URL(response.url());
    if (response.request().method() === "GET" && url.pathname.startsWith("/app/") && response.status() === 400) {
      refused.push(`GET ${url.pathname}${url.search}`);
    }
  });
  return {
    context,
    page,
    refusedAppReads: () => [...refused],
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh browser signed in to the web app as the demo wallet: the development wallet connected and the sign-in with
 * Ethereum done, on the dashboard once it shows the wallet's credits.
 */
export async function openSignedInBrowser(): Promise<TestBrowser> {
  const browser = await openBrowser();
  const { page } = browser;
  await page.goto(stackInfo().webUrl!);
  await page.getByTestId("connect-dev-wallet").click();
  await page.getByTestId("sign-in").click();
  await page.getByTestId("credits-available").waitFor();
  return browser;
}

/** The committed pictures of the app (docs/screenshots/), refreshed when `UPDATE_DOCS_SCREENSHOTS=1`. */
export const DOCS_SCREENSHOT_DIR = path.join(repoRoot, "docs", "screenshots");

/**
 * Saves a full-page screenshot to test-results/web/<name>.png (a CI artifact); with `docs`, and when
 * `UPDATE_DOCS_SCREENSHOTS=1`, also to docs/screenshots/<name>.png (committed, linked from the README).
 */
export async function screenshot(page: Page, name: string, { docs = false }: { docs?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  if (docs && process.env.UPDATE_DOCS_SCREENSHOTS === "1") {
    mkdirSync(DOCS_SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(DOCS_SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }
}
