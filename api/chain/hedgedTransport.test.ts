import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createPublicClient, HttpRequestError, RpcRequestError, TimeoutError, type Chain } from "viem";
import { hedgedTransport } from "./hedgedTransport.js";
import { postJson } from "../../shared/chain/jsonRpcHttp.js";

const chain = {
  id: 31337,
  name: "test",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [] } },
} as const satisfies Chain;

type Handler = (body: { id: number; method: string }) => { status?: number; body?: unknown } | "stall";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    ),
  );
});

/** A JSON-RPC endpoint answering through `handler`; counts the requests it got. */
async function endpoint(handler: Handler): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      calls++;
      const answer = handler(JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string });
      if (answer === "stall") return;
      response.writeHead(answer.status ?? 200, { "content-type": "application/json" });
      response.end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

const clientOf = (urls: string[], timeoutMs = 1_000, hedgeAfterMs = 100) =>
  createPublicClient({ chain, transport: hedgedTransport({ urls, timeoutMs, hedgeAfterMs, retryCount: 0 }) });

describe("hedgedTransport", () => {
  it("answers a JSON-RPC call over a kept-alive connection", async () => {
    const node = await endpoint(({ id }) => ({ body: { jsonrpc: "2.0", id, result: "0x2a" } }));
    const client = clientOf([node.url]);
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
    expect(await client.getBlockNumber({ cacheTime: 0 })).toBe(42n);
    expect(node.calls()).toBe(2);
  });

  it("surfaces a JSON-RPC error as viem's RpcRequestError, with its revert data, whatever the HTTP status", async () => {
    const error = { code: 3, message: "execution reverted", data: "0x12345678" };
    const node = await endpoint(({ id }) => ({ status: 500, body: { jsonrpc: "2.0", id, error } }));
    const thrown = await clientOf([node.url])
      .request({ method: "eth_call", params: [{ to: "0x0000000000000000000000000000000000000001" }, "latest"] })
      .catch((caught: unknown) => caught);
    expect(thrown).toBeInstanceOf(Error);
    const cause = (thrown as { walk: (fn: (e: unknown) => boolean) => unknown }).walk(
      (e) => e instanceof RpcRequestError,
    ) as RpcRequestError;
    expect(cause.code).toBe(3);
    expect((cause as unknown as { data: unknown }).data).toBe("0x12345678");
    // A revert is an answer: the same everywhere, so asked once.
    expect(node.calls()).toBe(1);
  });

  it("asks the next endpoint when the first has not answered in time, and the first answer wins", async () => {
    const stalled = await endpoint(() => "stall");
    const live = await endpoint(({ id }) => ({ body: { jsonrpc: "2.0", id, result: "0x7" } }));
    const started = Date.now();
    expect(await clientOf([stalled.url, live.url]).getBlockNumber({ cacheTime: 0 })).toBe(7n);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it("drops the request still waiting on a slower endpoint once another has answered", async () => {
    let dropped!: () => void;
    const droppedNow = new Promise<void>((resolve) => (dropped = resolve));
    const slow = createServer((request) => request.socket.once("close", dropped));
    servers.push(slow);
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const live = await endpoint(({ id }) => ({ body: { jsonrpc: "2.0", id, result: "0x7" } }));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    expect(await clientOf([slowUrl, live.url], 30_000).getBlockNumber({ cacheTime: 0 })).toBe(7n);
    await droppedNow;
  });

  it("throws viem's TimeoutError when no endpoint answers in time", async () => {
    const stalled = await endpoint(() => "stall");
    const thrown = await clientOf([stalled.url], 200)
      .getBlockNumber({ cacheTime: 0 })
      .catch((caught: unknown) => caught);
    expect(
      (thrown as { walk: (fn: (e: unknown) => boolean) => unknown }).walk((e) => e instanceof TimeoutError),
    ).toBeInstanceOf(TimeoutError);
  });

  it("throws an HttpRequestError (with the status) when no endpoint gives a JSON-RPC answer", async () => {
    const broken = await endpoint(() => ({ status: 502, body: "bad gateway" }));
    const refused = "http://127.0.0.1:1";
    const thrown = await clientOf([refused, broken.url])
      .getBlockNumber({ cacheTime: 0 })
      .catch((caught: unknown) => caught);
    const http = (thrown as { walk: (fn: (e: unknown) => boolean) => unknown }).walk(
      (e) => e instanceof HttpRequestError,
    ) as HttpRequestError;
    expect(http).toBeInstanceOf(HttpRequestError);
    expect([502, undefined]).toContain(http.status);
  });
});

describe("postJson", () => {
  it("gives up after its timeout and on its signal", async () => {
    const stalled = await endpoint(() => "stall");
    await expect(postJson(stalled.url, "{}", 100)).rejects.toMatchObject({ name: "TimeoutError" });
    const controller = new AbortController();
    const pending = postJson(stalled.url, "{}", 5_000, controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});
