import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCatalog, errorCodes, retryAdviceOf, type ErrorBody, type ErrorCode } from "@credit-metered/client/http";
import { ApiError, errorBody } from "../../api/errors/ApiError.js";
import { DOCS_PAGES } from "../../docs-site/site.js";
import { rawRequest, type RawResponse } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { DOCS_SCREENSHOT_DIR, SCREENSHOT_DIR, openBrowser, type TestBrowser } from "./support/browser.js";

// The documentation site (`{docs_url}`) as the running gateway serves it, read in a real browser: the errors page
// generated from the error catalog, every link of every page, the API reference rendered offline, and the link in
// every error body the gateway answers.

let browser: TestBrowser;
let page: Page;
/** `{docs_url}` as the gateway writes it into error bodies (read from a real one). */
let docsUrl: string;

const demoKey = () => stackInfo().demo.apiKey;
const errorOf = (response: RawResponse) => response.json<ErrorBody>().error;

beforeAll(async () => {
  browser = await openBrowser();
  page = browser.page;
  const docs = errorOf(await rawRequest("GET", "/v1/models")).docs;
  docsUrl = docs.slice(0, docs.indexOf("/errors#"));
});

afterAll(async () => {
  await browser?.close();
});

/** Opens a docs page and waits until it has rendered (the reference renders in the browser, from openapi.json). */
async function openPage(url: string): Promise<void> {
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  if (new URL(url).pathname.endsWith("/reference")) {
    await page.getByText("Create a chat completion", { exact: false }).first().waitFor({ timeout: 30_000 });
  }
}

/** The page's screenshot (viewport) in test-results/web, and in docs/screenshots with UPDATE_DOCS_SCREENSHOTS=1. */
async function screenshotDocs(name: string): Promise<void> {
  const dirs = [SCREENSHOT_DIR, ...(process.env.UPDATE_DOCS_SCREENSHOTS === "1" ? [DOCS_SCREENSHOT_DIR] : [])];
  for (const dir of dirs) {
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, `docs-${name}.png`) });
  }
}

/** Whether the page at `url` (no fragment) has an element with id `id`. */
async function hasAnchor(url: string, id: string): Promise<boolean> {
  await openPage(url);
  return page.evaluate((anchor) => document.getElementById(anchor) !== null, id);
}

describe("the docs site served by the gateway at {docs_url}", () => {
  it("is the gateway's own /docs by default, and /docs answers the overview", async () => {
    expect(docsUrl).toBe(`${stackInfo().apiUrl}/docs`);
    await openPage(`${docsUrl}/`);
    expect(await page.locator("h1").first().innerText()).toBe("Credit-metered inference API");
  });

  it("serves every page, and screenshots of each are in docs/screenshots", async () => {
    for (const { name, title } of DOCS_PAGES) {
      await openPage(`${docsUrl}/${name}`);
      expect(await page.title()).toContain(title);
      await screenshotDocs(name);
    }
  });

  it("the errors page has one anchor per code of the error catalog, with its status, type, when and retry advice", async () => {
    await openPage(`${docsUrl}/errors`);
    const ids = await page.$$eval("section.error-code", (sections) => sections.map((section) => section.id));
    expect(ids).toEqual(errorCodes);
    for (const code of errorCodes) {
      const text = await page.locator(`section#${code}`).innerText();
      const entry = errorCatalog[code];
      expect(text).toContain(String(entry.status));
      expect(text).toContain(entry.type);
      // The catalog's prose, with its `code spans` rendered as code.
      expect(text).toContain(entry.when.replaceAll("`", ""));
      expect(text).toContain(retryAdviceOf(code).replaceAll("`", ""));
      const details: Record<string, string> | undefined = (entry as { details?: Record<string, string> }).details;
      for (const field of Object.keys(details ?? {})) expect(text).toContain(field);
    }
    await page.goto(`${docsUrl}/errors#insufficient_credits`);
    await screenshotDocs("errors-insufficient_credits");
  });

  it("every link on every page resolves: a page of the site, holding the anchor it names; nothing off the site", async () => {
    const links = new Map<string, string>(); // target → the page that links to it
    for (const { name } of DOCS_PAGES) {
      const pageUrl = `${docsUrl}/${name}`;
      await openPage(pageUrl);
      // Links a reader can see: the reference hides its renderer's off-site "Powered by" link (docs-site/reference.js).
      const hrefs = await page.$$eval("a[href]", (anchors) =>
        anchors.filter((anchor) => anchor.checkVisibility()).map((anchor) => (anchor as HTMLAnchorElement).href),
      );
      for (const href of hrefs) links.set(href, links.get(href) ?? pageUrl);
    }
    expect(links.size).toBeGreaterThan(50);
    const offSite = [...links.keys()].filter((href) => !href.startsWith(`${docsUrl}/`));
    expect(offSite).toEqual([]);
    const anchorsOf = new Map<string, Set<string>>();
    for (const [href, from] of links) {
      const target = new URL(href);
      const hash = decodeURIComponent(target.hash.slice(1));
      target.hash = "";
      const response = await page.request.get(target.href);
      expect(response.status(), `${href} (linked from ${from})`).toBe(200);
      if (!hash || !response.headers()["content-type"]?.startsWith("text/html")) continue;
      // The reference's own fragments are Scalar's client-side routes (`#tag/jobs/GET/v1/jobs`), not element ids:
      // the next test opens the route of every operation.
      if (target.pathname.endsWith("/reference")) continue;
      if (!anchorsOf.has(target.href)) {
        await openPage(target.href);
        anchorsOf.set(target.href, new Set(await page.$$eval("[id]", (elements) => elements.map((e) => e.id))));
      }
      expect(anchorsOf.get(target.href)!.has(hash), `${href} (linked from ${from}) names a missing anchor`).toBe(true);
    }
  });

  it("the API reference renders every operation of the OpenAPI document from the site's own files, offline", async () => {
    const offSite: string[] = [];
    const listener = (request: { url: () => string }) => {
      if (!request.url().startsWith(stackInfo().apiUrl) && !request.url().startsWith("data:"))
        offSite.push(request.url());
    };
    page.on("request", listener);
    try {
      await openPage(`${docsUrl}/reference`);
      const document = (await (await page.request.get(`${docsUrl}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { summary: string; tags: string[] }>>;
      };
      expect(document).toEqual((await rawRequest("GET", "/v1/openapi.json")).json());
      // Scalar renders sections as they scroll into view: open each operation's route and see its heading.
      for (const [route, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const url = `${docsUrl}/reference#tag/${operation.tags[0]!.toLowerCase()}/${method.toUpperCase()}${route}`;
          const heading = page.getByRole("heading", { name: operation.summary }).first();
          await page.goto("about:blank");
          await page.goto(url);
          // One reload, as a reader would: once in many CI runs on a loaded host, Scalar's jump to the hash at load
          // lost its race with its lazy rendering and the section never came (stop 48). A section that is missing
          // from the reference still fails, on the second load.
          const shown = await heading.waitFor({ timeout: 15_000 }).then(
            () => true,
            () => false,
          );
          if (!shown) {
            await page.goto("about:blank");
            await page.goto(url);
            await heading.waitFor({ timeout: 15_000 });
          }
        }
      }
      await page.goto("about:blank");
      await page.goto(`${docsUrl}/reference#tag/jobs/GET/v1/jobs`);
      await page.getByRole("heading", { name: document.paths["/v1/jobs"]!.get!.summary }).first().waitFor();
      await screenshotDocs("reference-list-jobs");
    } finally {
      page.off("request", listener);
    }
    expect(offSite).toEqual([]);
  });
});

describe("every error links to its entry", () => {
  /** Real errors, each driven on the running gateway by the request that causes it. */
  const chat = (body: unknown, headers?: Record<string, string>) =>
    rawRequest("POST", "/v1/chat/completions", { apiKey: demoKey(), body, ...(headers ? { headers } : {}) });
  const get = (path: string, headers?: Record<string, string>) =>
    rawRequest("GET", path, { apiKey: demoKey(), ...(headers ? { headers } : {}) });
  const realErrors: { code: ErrorCode; via: string; send: () => Promise<RawResponse> }[] = [
    { code: "missing_api_key", via: "no key", send: () => rawRequest("GET", "/v1/models") },
    {
      code: "invalid_api_key",
      via: "an unknown key",
      send: () => rawRequest("GET", "/v1/models", { apiKey: `svc_live_${"0".repeat(32)}` }),
    },
    { code: "route_not_found", via: "an unknown path", send: () => get("/v1/no-such-endpoint") },
    {
      code: "method_not_allowed",
      via: "PUT /v1/models",
      send: () => rawRequest("PUT", "/v1/models", { apiKey: demoKey() }),
    },
    { code: "invalid_request", via: "an unknown query parameter", send: () => get("/v1/jobs?colour=blue") },
    { code: "job_not_found", via: "another job id", send: () => get(`/v1/jobs/job_${"0".repeat(26)}`) },
    { code: "model_not_found", via: "GET /v1/models/{unknown}", send: () => get("/v1/models/no-such-model") },
    {
      code: "model_not_found",
      via: "a completion for an unknown model",
      send: () => chat({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }),
    },
    {
      code: "webhook_not_found",
      via: "deleting an unknown webhook",
      send: () => rawRequest("DELETE", `/v1/webhooks/wh_${"0".repeat(26)}`, { apiKey: demoKey() }),
    },
    { code: "expectation_failed", via: "Expect: teapot", send: () => get("/v1/models", { expect: "teapot" }) },
    {
      code: "unsupported_media_type",
      via: "Content-Encoding: compress",
      send: () => chat("{}", { "content-type": "application/json", "content-encoding": "compress" }),
    },
    { code: "payload_too_large", via: "a 2 MB body", send: () => chat(`"${"x".repeat(2_000_000)}"`) },
    {
      code: "app_session_required",
      via: "the web app's /app/me without a session",
      send: () => rawRequest("GET", "/app/me"),
    },
  ];

  it.each(realErrors)("a real $code answer ($via) links to a page holding its anchor", async ({ code, send }) => {
    const response = await send();
    const error = errorOf(response);
    expect(error.code).toBe(code);
    expect(response.status).toBe(errorCatalog[code].status);
    expect(error.docs).toBe(`${docsUrl}/errors#${code}`);
    const [url, anchor] = error.docs.split("#") as [string, string];
    expect(await hasAnchor(url, anchor)).toBe(true);
  });

  it("every code of the catalog, as the gateway writes its body, links to a page holding its anchor", async () => {
    const missing: string[] = [];
    const pages = new Map<string, Set<string>>();
    for (const code of errorCodes) {
      const link = errorBody(new ApiError(code), docsUrl).error.docs;
      const [url, anchor] = link.split("#") as [string, string];
      if (!pages.has(url)) {
        await openPage(url);
        pages.set(url, new Set(await page.$$eval("[id]", (elements) => elements.map((e) => e.id))));
      }
      if (!pages.get(url)!.has(anchor)) missing.push(link);
    }
    expect(missing).toEqual([]);
  });
});
