import { Writable } from "node:stream";
import express from "express";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { logRequests } from "./logRequests.js";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves one route behind `logRequests` with a logger at `level`; returns the lines it wrote after one request. */
async function linesAfterOneRequest(level: string): Promise<{ lines: string[]; hadRequestLogger: boolean }> {
  const lines: string[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  let hadRequestLogger = false;
  const app = express();
  app.use(logRequests(logger));
  app.get("/v1/models", (req, res) => {
    hadRequestLogger = "log" in req;
    res.json({ ok: true });
  });
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server!.once("listening", resolve));
  await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/models`);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { lines, hadRequestLogger };
}

describe("logRequests", () => {
  it("logs each answered request at info", async () => {
    const { lines } = await linesAfterOneRequest("info");
    expect(lines.some((line) => line.includes("request completed"))).toBe(true);
  });

  it("costs nothing per request when info is off", async () => {
    expect(await linesAfterOneRequest("warn")).toEqual({ lines: [], hadRequestLogger: false });
  });
});
