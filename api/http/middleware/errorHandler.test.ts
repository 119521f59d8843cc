import { describe, expect, it } from "vitest";
import express from "express";
import { pino } from "pino";
import type { AddressInfo } from "node:net";
import { HttpRequestError, RpcRequestError, TimeoutError } from "viem";
import { ApiError } from "../../errors/ApiError.js";
import { IndexUnavailableError } from "../../readModel/indexClient.js";
import { errorCatalog } from "@credit-metered/client/http";
import { errorHandler, notFoundHandler } from "./errorHandler.js";

async function answer(route: express.RequestHandler, init: RequestInit = {}): Promise<Response> {
  const app = express();
  app.use(express.json({ limit: "10b" }));
  app.post("/x", route);
  app.use(notFoundHandler);
  app.use(errorHandler("https://docs.example", pino({ level: "silent" })));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await fetch(`http://127.0.0.1:${port}/x`, { method: "POST", ...init });
  } finally {
    server.close();
  }
}

describe("errorHandler", () => {
  it("writes the spec's error body with the catalog status, type, param, docs link and details", async () => {
    const response = await answer(() => {
      throw new ApiError("no_workers_available", {
        details: { model: "m", retry_after: 5 },
        headers: { "retry-after": "5" },
      });
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.json()).toEqual({
      error: {
        code: "no_workers_available",
        message: errorCatalog.no_workers_available.message,
        type: "capacity_error",
        param: null,
        docs: "https://docs.example/errors#no_workers_available",
        details: { model: "m", retry_after: 5 },
      },
    });
  });

  it("error: a body that is not JSON is invalid_request", async () => {
    const response = await answer((_req, res) => void res.end(), {
      body: "{",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
  });

  it("error: a body over the limit is payload_too_large (413)", async () => {
    const response = await answer((_req, res) => void res.end(), {
      body: JSON.stringify({ a: "x".repeat(100) }),
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(413);
  });

  it("error: an unexpected error becomes a generic 500 without internals", async () => {
    const response = await answer(() => {
      throw new Error("secret database detail");
    });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("secret");
    expect(JSON.parse(text).error.code).toBe("internal_error");
  });
});

describe("errorHandler: a dependency that does not answer (issue 12)", () => {
  const outages: [string, () => Error][] = [
    ["a chain node timeout", () => new TimeoutError({ body: { method: "eth_call" }, url: "http://node" })],
    ["a reset connection to the node", () => new HttpRequestError({ url: "http://node", details: "socket hang up" })],
    ["an index that did not answer", () => new IndexUnavailableError("index did not answer within 2000 ms")],
    [
      "a database that did not answer (wrapped)",
      () => new Error("load failed", { cause: Object.assign(new Error("Query read timeout"), {}) }),
    ],
  ];
  for (const [what, make] of outages) {
    it(`error: ${what} becomes 503 service_unavailable with retry_after, never a 500`, async () => {
      const response = await answer(() => {
        throw make();
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      const body = (await response.json()) as { error: { code: string; details: { retry_after: number } } };
      expect(body.error.code).toBe("service_unavailable");
      expect(body.error.details.retry_after).toBe(5);
    });
  }

  it("error: a JSON-RPC error the node did answer (a revert) stays a 500, not a retry hint", async () => {
    const response = await answer(() => {
      throw new RpcRequestError({ body: {}, url: "http://node", error: { code: 3, message: "execution reverted" } });
    });
    expect(response.status).toBe(500);
  });
});

describe("error catalog", () => {
  it("keeps the spec's statuses for the spec's codes", () => {
    expect({
      invalid_api_key: errorCatalog.invalid_api_key.status,
      missing_api_key: errorCatalog.missing_api_key.status,
      key_suspended: errorCatalog.key_suspended.status,
      insufficient_credits: errorCatalog.insufficient_credits.status,
      model_not_found: errorCatalog.model_not_found.status,
      no_workers_available: errorCatalog.no_workers_available.status,
      job_timeout: errorCatalog.job_timeout.status,
      invalid_request: errorCatalog.invalid_request.status,
      context_length_exceeded: errorCatalog.context_length_exceeded.status,
      dispute_window_expired: errorCatalog.dispute_window_expired.status,
    }).toEqual({
      invalid_api_key: 401,
      missing_api_key: 401,
      key_suspended: 403,
      insufficient_credits: 402,
      model_not_found: 400,
      no_workers_available: 503,
      job_timeout: 504,
      invalid_request: 400,
      context_length_exceeded: 400,
      dispute_window_expired: 422,
    });
  });
});
