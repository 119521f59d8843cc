import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCodes } from "@credit-metered/client/http";
import { buildDocsSite, DOCS_PAGES } from "../../docs-site/site.js";
import { createApp } from "../http/createApp.js";
import { serveDocs } from "./serveDocs.js";

// The docs site as the gateway serves it (the browser suite, test/web/docsSite.test.ts, reads it on a real stack).

let server: Server;
let base: string;

beforeAll(async () => {
  const site = await buildDocsSite({ apiBaseUrl: "https://api.example" });
  const app = createApp({
    docsUrl: "http://docs.invalid",
    bodyLimit: "1kb",
    logger: pino({ level: "silent" }),
    routers: [serveDocs(site)],
  });
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

describe("the gateway's /docs", () => {
  it("redirects /docs to /docs/, whose relative links resolve inside the site", async () => {
    const response = await fetch(`${base}/docs`, { redirect: "manual" });
    expect(response.status).toBe(301);
    expect(response.headers.get("location")).toBe("/docs/");
    expect(await (await fetch(`${base}/docs/`)).text()).toContain('href="quickstart.html"');
  });

  it("serves each page at /docs/<name> and /docs/<name>.html, as HTML in UTF-8", async () => {
    for (const { name } of DOCS_PAGES) {
      for (const path of [`/docs/${name}`, `/docs/${name}.html`]) {
        const response = await fetch(`${base}${path}`);
        expect(response.status, path).toBe(200);
        expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      }
    }
  });

  it("the errors page, where error bodies link, has an element per code of the catalog", async () => {
    const html = await (await fetch(`${base}/docs/errors`)).text();
    for (const code of errorCodes) expect(html).toContain(`id="${code}"`);
  });

  it("shows the configured API root in the examples", async () => {
    expect(await (await fetch(`${base}/docs/quickstart`)).text()).toContain("https://api.example/v1/chat/completions");
  });

  it("answers a name the site does not have with the gateway's JSON 404", async () => {
    const response = await fetch(`${base}/docs/no-such-page`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
  });
});
