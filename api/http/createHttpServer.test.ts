import type { Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { Router } from "express";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./createApp.js";
import { createHttpServer, TIMEOUT_CHECK_INTERVAL_MS } from "./createHttpServer.js";

// The gateway's HTTP server with short timeouts, on a real socket: slow requests are cut off, long answers are not
// (issue 23 items 6 and 8). The same checks run against the whole stack in test/api/hardeningV2.test.ts.

const HEADERS_MS = 500;
const REQUEST_MS = 1_000;
const STREAM_MS = 2_500;
let server: Server;
let port: number;

beforeAll(async () => {
  const routes = Router();
  routes.get("/stream", (_req, res) => {
    // A healthy answer that outlives every receive timeout: a chunk every 100 ms.
    res.writeHead(200, { "content-type": "text/event-stream" });
    const timer = setInterval(() => res.write("data: tick\n\n"), 100);
    setTimeout(() => {
      clearInterval(timer);
      res.end("data: [DONE]\n\n");
    }, STREAM_MS);
  });
  routes.post("/echo", (req, res) => {
    res.json({ received: req.body as unknown });
  });
  const app = createApp({
    docsUrl: "http://docs.test",
    bodyLimit: "1mb",
    logger: pino({ level: "silent" }),
    routers: [routes],
  });
  server = createHttpServer(app, {
    HTTP_HEADERS_TIMEOUT_MS: HEADERS_MS,
    HTTP_REQUEST_TIMEOUT_MS: REQUEST_MS,
    HTTP_KEEP_ALIVE_TIMEOUT_MS: 1_000,
    DOCS_URL: "http://docs.test",
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Writes `first`, then `drip` one byte every 100 ms; the answer read until the server closes the connection. */
function exchange(first: string, drip = ""): Promise<{ text: string; elapsedMs: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    let text = "";
    let sent = 0;
    const socket = connect(port, "127.0.0.1", () => socket.write(first));
    const timer = setInterval(() => {
      if (sent < drip.length && socket.writable) socket.write(drip[sent++]!);
    }, 100);
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ text, elapsedMs: Date.now() - started });
    });
  });
}

function expectSpecError(text: string, status: number, code: string): void {
  expect(text, text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { error: { code: string; docs: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.docs).toBe(`http://docs.test/errors#${code}`);
}

describe("createHttpServer", () => {
  it("a stream longer than every receive timeout runs to its end", async () => {
    const { text, elapsedMs } = await exchange("GET /stream HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    expect(elapsedMs).toBeGreaterThanOrEqual(STREAM_MS - 100);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain("data: [DONE]");
  });

  it("error: a body trickled in is cut off with 408 request_timeout after the request timeout", async () => {
    const body = JSON.stringify({ text: "x".repeat(100) });
    const { text, elapsedMs } = await exchange(
      `POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expectSpecError(text, 408, "request_timeout");
    expect(elapsedMs).toBeLessThan(REQUEST_MS + 2 * TIMEOUT_CHECK_INTERVAL_MS + 300);
  });

  it("error: headers trickled in are cut off with 408 request_timeout after the header timeout", async () => {
    const { text, elapsedMs } = await exchange("GET /stream HTTP/1.1\r\nX-Slow: ", "a".repeat(100));
    expectSpecError(text, 408, "request_timeout");
    expect(elapsedMs).toBeLessThan(HEADERS_MS + 2 * TIMEOUT_CHECK_INTERVAL_MS + 300);
  });

  it("a connection that sends nothing is closed after the header timeout", async () => {
    const { elapsedMs } = await exchange("");
    expect(elapsedMs).toBeLessThan(HEADERS_MS + 2 * TIMEOUT_CHECK_INTERVAL_MS + 300);
  });

  it("error: an HTTP/1.1 request without Host is 400 invalid_request in the spec's format", async () => {
    const { text } = await exchange("GET /stream HTTP/1.1\r\nConnection: close\r\n\r\n");
    expectSpecError(text, 400, "invalid_request");
    expect(text.toLowerCase()).not.toContain("x-request-id");
  });

  it("error: two Host headers are 400 invalid_request in the spec's format", async () => {
    const { text } = await exchange("GET /stream HTTP/1.1\r\nHost: t\r\nHost: u\r\nConnection: close\r\n\r\n");
    expectSpecError(text, 400, "invalid_request");
  });

  it("an HTTP/1.0 request without Host is served (the header is HTTP/1.1's)", async () => {
    const body = "{}";
    const { text } = await exchange(
      `POST /echo HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
  });
});
