import { mkdtempSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Router } from "express";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { serveWeb } from "../app/serveWeb.js";
import { answerOutsideRoutes } from "./clientError.js";
import { createApp } from "./createApp.js";
import { MAX_JSON_DEPTH } from "./jsonDepth.js";
import { parseQuery } from "./parseQuery.js";

const DOCS = "https://docs.example";

/** A gateway-shaped app: a few API routes, the web app's build at `/`, the spec-format error handling. */
function testApp() {
  const api = Router();
  api.get("/v1/things", (req, res) => {
    res.json(
      parseQuery(
        req,
        z.object({
          limit: z
            .string()
            .regex(/^[0-9]+$/)
            .optional(),
          name: z.string().optional(),
        }),
      ),
    );
  });
  api.post("/v1/things", (_req, res) => void res.status(201).json({}));
  api.get("/v1/things/:id", (req, res) => void res.json({ id: req.params.id }));
  api.delete("/v1/things/:id/tags/:tag", (_req, res) => void res.json({}));
  const web = mkdtempSync(path.join(tmpdir(), "web-"));
  writeFileSync(path.join(web, "index.html"), "<!doctype html><title>app</title>");
  return createApp({
    docsUrl: DOCS,
    bodyLimit: "1kb",
    logger: pino({ level: "silent" }),
    routers: [api, serveWeb(web)],
  });
}

let server: Server;
let base: string;

beforeAll(async () => {
  server = testApp().listen(0, "127.0.0.1");
  answerOutsideRoutes(server, DOCS);
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

async function errorOf(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return ((await response.json()) as { error: { code: string; param: string | null; docs: string } }).error;
}

describe("createApp: answers outside the routes are in the spec's format (issue 11)", () => {
  it("a wrong method on a known path is 405 with Allow listing the path's methods", async () => {
    const response = await fetch(`${base}/v1/things`, { method: "PUT" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
    expect((await errorOf(response)).code).toBe("method_not_allowed");
    const nested = await fetch(`${base}/v1/things/a/tags/b`, { method: "GET" });
    expect(nested.status).toBe(405);
    expect(nested.headers.get("allow")).toBe("DELETE");
  });

  it("an unknown path is 404 route_not_found, whatever the method (the web app's fallback is not a route)", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const response = await fetch(`${base}/v1/nothing`, { method });
      expect(response.status).toBe(404);
      expect((await errorOf(response)).code).toBe("route_not_found");
    }
  });

  it("unknown paths under any /v<n>/ are JSON 404s even for a browser; other paths get the web app", async () => {
    for (const url of ["/v2/models", "/v2", "/v10/x/y"]) {
      const response = await fetch(`${base}${url}`, { headers: { accept: "text/html" } });
      expect(response.status).toBe(404);
      expect((await errorOf(response)).code).toBe("route_not_found");
    }
    const page = await fetch(`${base}/settings`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>app</title>");
  });

  it("malformed percent-encoding in a path segment is read literally, not a decoding error", async () => {
    for (const [sent, id] of [
      ["%ZZ", "%ZZ"],
      ["%", "%"],
      ["%C3%28", "%C3%28"],
      ["ok%20id", "ok id"],
    ]) {
      const response = await fetch(`${base}/v1/things/${sent}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ id });
    }
  });

  it("error: query parameters are one plain value each, named when they are not", async () => {
    expect(await (await fetch(`${base}/v1/things?limit=5`)).json()).toEqual({ limit: "5" });
    expect(await (await fetch(`${base}/v1/things?name=a%20b+c%C3%A9`)).json()).toEqual({ name: "a b cé" });
    for (const [query, param] of [
      ["limit[]=5", "limit"],
      ["limit=5&limit=6", "limit"],
      ["limit=0x5", "limit"],
      ["other=1", "other"],
      ["name=%ZZ", "name"],
      ["name=a%C3%28", "name"],
      ["limit=5&name=%", "name"],
    ]) {
      const response = await fetch(`${base}/v1/things?${query}`);
      expect(response.status).toBe(400);
      expect(await errorOf(response)).toMatchObject({ code: "invalid_request", param });
    }
  });

  it("error: a corrupt gzip body is 400 invalid_request, an unknown encoding 415", async () => {
    const corrupt = await fetch(`${base}/v1/things`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: "not gzip at all",
    });
    expect(corrupt.status).toBe(400);
    expect((await errorOf(corrupt)).code).toBe("invalid_request");
    const unknown = await fetch(`${base}/v1/things`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "compress" },
      body: "{}",
    });
    expect(unknown.status).toBe(415);
    expect((await errorOf(unknown)).code).toBe("unsupported_media_type");
  });

  it("error: a body nested deeper than MAX_JSON_DEPTH is invalid_request; brackets inside strings do not count", async () => {
    const post = (body: string) =>
      fetch(`${base}/v1/things`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const deep = await post(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`);
    expect(deep.status).toBe(400);
    expect((await errorOf(deep)).code).toBe("invalid_request");
    expect((await post(`${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`)).status).toBe(201);
    expect((await post(JSON.stringify({ text: "[".repeat(500), quote: '\\"[[[' }))).status).toBe(201);
  });

  it("error: oversized headers are 431 headers_too_large with the spec's body", async () => {
    const response = await fetch(`${base}/v1/things`, { headers: { "x-padding": "p".repeat(20_000) } });
    expect(response.status).toBe(431);
    const error = await errorOf(response);
    expect(error).toMatchObject({ code: "headers_too_large", docs: `${DOCS}/errors#headers_too_large` });
  });
});

/** Writes `head` byte for byte and reads until the server closes: status, lower-cased headers, body. */
async function rawExchange(head: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { port } = server.address() as AddressInfo;
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(Buffer.from(head, "latin1")));
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.setTimeout(5_000, () => reject(new Error(`no answer and no close: ${JSON.stringify(received)}`)));
  });
  const [headText = "", body = ""] = text.split("\r\n\r\n", 2);
  const [statusLine = "", ...lines] = headText.split("\r\n");
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
  );
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

function specError(answer: { headers: Record<string, string>; body: string }) {
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  return (JSON.parse(answer.body) as { error: { code: string; docs: string } }).error;
}

describe("createApp: the HTTP server's own answers are in the spec's format (fuzzer findings after issue 11)", () => {
  const requests = {
    "an invalid header byte": "GET /v1/things HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\nConnection: close\r\n\r\n",
    "a header name with a space": "GET /v1/things HTTP/1.1\r\nHost: x\r\nBad Name: x\r\nConnection: close\r\n\r\n",
    "an extra token in the request line": "GET /v1/things HTTP/1.1 extra\r\nHost: x\r\nConnection: close\r\n\r\n",
    "raw non-ASCII bytes in the path": "GET /v1/things/\u00e9\u00ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    "an unknown method": "FOO /v1/things HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    "bad chunked framing":
      "POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "conflicting Content-Length headers":
      "POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{} ",
  };
  for (const [what, head] of Object.entries(requests)) {
    it(`error: ${what} is 400 invalid_request with the spec's error body`, async () => {
      const answer = await rawExchange(head);
      expect(answer.status).toBe(400);
      expect(specError(answer)).toMatchObject({ code: "invalid_request", docs: `${DOCS}/errors#invalid_request` });
    });
  }

  it("error: an Expect other than 100-continue is 417 expectation_failed with the spec's error body", async () => {
    const answer = await rawExchange(
      "GET /v1/things HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n",
    );
    expect(answer.status).toBe(417);
    expect(specError(answer).code).toBe("expectation_failed");
  });

  it("error: CONNECT is answered 405 method_not_allowed with Allow, not a dropped connection", async () => {
    const answer = await rawExchange("CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n");
    expect(answer.status).toBe(405);
    expect(answer.headers["allow"]).toBe("GET, HEAD, POST, DELETE");
    expect(specError(answer).code).toBe("method_not_allowed");
  });
});
