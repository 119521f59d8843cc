import http from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { createSiweMessage } from "viem/siwe";
import { beforeAll, describe, expect, it } from "vitest";
import { startGatewayProxy } from "../../scripts/stack/gatewayProxy.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { chatBody, expectErrorBody, rawRequest, type Job, type RawResponse } from "../support/api.js";
import { RPC_ANSWER_MAX_BYTES } from "../../api/endpoints/app/rpc.create.js";
import { accountOf, freshAccount, mined, walletClient } from "../support/chain.js";
import { startExtraGateway } from "../support/gateways.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

// Issue 23 ("Hardening v2"): one describe per item, each against the real stack. Item 2 (webhook isolation) is
// test/webhooks/isolation.test.ts; item 5 (refund_tx) is api/jobs/jobLifecycle.test.ts.

const FINAL = new Set(["settled", "failed", "refunded"]);

/** One request written on its own socket; the answer read until the server closes it (or `timeoutMs`). */
function exchange(
  raw: string,
  { timeoutMs = 20_000, baseUrl = stackInfo().apiUrl }: { timeoutMs?: number; baseUrl?: string } = {},
): Promise<{ text: string; closed: boolean; elapsedMs: number }> {
  const url = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(raw));
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false, elapsedMs: Date.now() - started });
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true, elapsedMs: Date.now() - started });
    });
    socket.on("error", reject);
  });
}

/** The JSON body of a raw HTTP/1.1 answer (Content-Length framed). */
function bodyOf(text: string): { error?: { code?: string; message?: string; type?: string } } {
  return JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { error?: { code?: string } };
}

function hostOf(baseUrl = stackInfo().apiUrl): string {
  return new URL(baseUrl).host;
}

/** A deterministic PRNG (mulberry32): the same seed replays the same disconnect instants. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function jobsOf(apiKey: string): Promise<Job[]> {
  const response = await rawRequest("GET", "/v1/jobs?limit=100", { apiKey });
  expect(response.status, response.body).toBe(200);
  return response.json<{ data: Job[] }>().data;
}

describe("item 1: a client that hangs up at any instant is charged only for the tokens it received", () => {
  // A worker of this file's own: 300 ms to the first token, then 40 tokens at 40 tokens/s. A request lives
  // ~1.4 s: validation, escrow, routing (300 ms), then one token every 25 ms.
  const OUTPUT_TOKENS = 40;
  // The earliest instant a whole answer can exist: the worker's first token at 300 ms, the other 39 at 40/s.
  const WHOLE_ANSWER_MIN_MS = 300 + ((OUTPUT_TOKENS - 1) * 1_000) / 40;
  // The client hangs up by sending its FIN and keeps reading until the gateway closes, so what reached its socket is
  // known exactly: the tokens it had read when it hung up, and those already on their way (written by the gateway
  // before it read the FIN; the simulated worker catches up on a late timer in a burst, so that can be many). The
  // gateway sees a FIN the same way whether the client then reads on or not: `httpAllowHalfOpen` is off, so it ends
  // its side on the FIN and writes nothing after it.
  // At most 90: the checks read one page (100) of the wallet's jobs.
  const RUNS = Math.min(Number(process.env.DISCONNECT_RUNS ?? 24), 90);
  const SEED = Number(process.env.DISCONNECT_SEED ?? Date.now() % 1_000_000);
  // Aimed hang-ups per window the random ones missed; with RUNS at most 90 the jobs still fit one page of 100.
  const EXTRA_RUNS = 4;
  let client: ClientWallet;
  let modelId: string;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
    modelId = await claimCatalogModel("hangup", { tier: "lite" });
    await startExtraWorker(
      {
        models: [modelId],
        ttftMs: 300,
        tokensPerSecond: 40,
        minOutputTokens: OUTPUT_TOKENS,
        maxOutputTokens: OUTPUT_TOKENS,
      },
      client.apiKey,
    );
  }, 120_000);

  /**
   * Sends a completion on a raw socket and hangs up after `delayMs`: what the client had read by then (`tokens`,
   * `whole`), and every token that reached its socket, the ones in flight at the hang-up included (`delivered`).
   */
  function hangUpAfter(
    stream: boolean,
    delayMs: number,
  ): Promise<{ tokens: number; delivered: number; whole: boolean; wholeDelivered: boolean }> {
    // max_tokens cuts the simulated text (which runs up to a sentence past the worker's maximum) at exactly
    // OUTPUT_TOKENS, so a whole answer has a known size.
    const body = JSON.stringify(chatBody(modelId, { stream, max_tokens: OUTPUT_TOKENS }));
    const url = new URL(stackInfo().apiUrl);
    const head =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${client.apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    // Only complete data lines carrying text are tokens.
    const tokensIn = (text: string) =>
      text
        .split("\n")
        .filter((line) => line.startsWith("data: {") && text.includes(`${line}\n`))
        .filter((line) => {
          const chunk = JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] };
          return (chunk.choices?.[0]?.delta?.content ?? "") !== "";
        }).length;
    const isWhole = (text: string) =>
      stream ? text.includes("data: [DONE]") : /"object":"chat\.completion"/.test(text);
    return new Promise((resolve, reject) => {
      let text = "";
      let read: { tokens: number; whole: boolean } | undefined;
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(head + body);
        setTimeout(() => {
          read = { tokens: tokensIn(text), whole: isWhole(text) };
          socket.end();
          // The gateway ends its side on the FIN; a connection it kept open would be a fault of its own.
          setTimeout(() => {
            if (socket.destroyed) return;
            socket.destroy();
            reject(new Error(`the gateway kept the connection open 10 s after the hang-up at ${delayMs} ms`));
          }, 10_000).unref();
        }, delayMs);
      });
      socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      socket.on("error", reject);
      socket.on("close", () => {
        if (!read) return reject(new Error(`the gateway closed the connection before the hang-up at ${delayMs} ms`));
        resolve({ ...read, delivered: tokensIn(text), wholeDelivered: isWhole(text) });
      });
    });
  }

  it(`property: ${RUNS} hang-ups at random instants (before the escrow, while it opens, while routed, mid-stream)`, async () => {
    const random = prng(SEED);
    const before = await accountOf(client.wallet);
    let known = (await jobsOf(client.apiKey)).length;
    const cases: string[] = [];
    const seen = { noJob: 0, failedBeforeFirstToken: 0, midStream: 0, whole: 0, settledUndelivered: 0, inFlightMax: 0 };
    /** One hang-up of a `stream` or whole request after `delayMs`, and what it must have cost. */
    const hangUpAndCheck = async (stream: boolean, delayMs: number): Promise<void> => {
      const received = await hangUpAfter(stream, delayMs);
      const label = `seed ${SEED} run ${cases.length}: ${stream ? "stream" : "whole"} hang-up at ${delayMs} ms, ${received.tokens} tokens read, ${received.delivered} reached the client`;
      cases.push(label);
      // The request's job, if it got one, once it has ended (a hang-up before the escrow leaves none).
      const job = await waitFor(
        `${label}: the job ends`,
        async () => {
          const jobs = await jobsOf(client.apiKey);
          const fresh = jobs.slice(0, jobs.length - known);
          if (fresh.some((candidate) => !FINAL.has(candidate.status))) return undefined;
          return { job: fresh[0] ?? null };
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      // A job may appear just after a hang-up while the escrow opens: give the gateway a moment, then look again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const late = (await jobsOf(client.apiKey)).length - known;
      const final =
        late > 0 && !job.job
          ? await waitFor(`${label}: the late job ends`, async () => {
              const [newest] = await jobsOf(client.apiKey);
              return newest && FINAL.has(newest.status) ? newest : undefined;
            })
          : job.job;
      known = (await jobsOf(client.apiKey)).length;
      expect(late, `${label}: one request, at most one job`).toBeLessThanOrEqual(1);
      seen.inFlightMax = Math.max(seen.inFlightMax, received.delivered - received.tokens);
      if (!final) {
        seen.noJob++; // gone before the escrow: nothing locked, nothing charged, nothing sent
        expect(received.delivered, label).toBe(0);
        return;
      }
      const notCharged = () => {
        expect(final.credits_charged ?? 0, `${label}: ${final.status}`).toBe(0);
        expect(["failed", "refunded"], label).toContain(final.status);
      };
      if (stream) {
        // A stream is charged for exactly the tokens that reached the client: those it read and those on their way
        // when it hung up. None reached it: nothing is charged.
        if (received.delivered === 0) {
          seen.failedBeforeFirstToken++;
          notCharged();
        } else {
          if (received.wholeDelivered) seen.whole++;
          else seen.midStream++;
          expect(final.status, label).toBe("settled");
          expect(final.usage.completion_tokens, label).toBe(received.delivered);
        }
        return;
      }
      if (received.wholeDelivered) {
        seen.whole++;
        expect(final.status, label).toBe("settled");
        expect(final.usage.completion_tokens, label).toBe(OUTPUT_TOKENS);
      } else if (final.status === "settled") {
        // A whole completion is charged once its receipt is stored, a few milliseconds before its body is written;
        // a client gone in between gets the stored answer with an Idempotency-Key retry (api/README.md "When the
        // connection breaks"). The worker's pace bounds that instant from below.
        seen.settledUndelivered++;
        expect(delayMs, label).toBeGreaterThanOrEqual(WHOLE_ANSWER_MIN_MS);
        expect(final.usage.completion_tokens, label).toBe(OUTPUT_TOKENS);
      } else {
        seen.failedBeforeFirstToken++;
        notCharged();
      }
    };
    for (let run = 0; run < RUNS; run++) {
      const stream = random() < 0.6;
      // Half the instants in the first 60 ms (the window of the issue: validation, escrow, routing), the rest
      // spread over the request's life.
      await hangUpAndCheck(stream, Math.floor(random() < 0.5 ? random() * 60 : 60 + random() * 1_500));
    }
    // The random instants must have covered a stream's whole life. When a draw missed a window (a CI run: no stream
    // instant between its first and last token, on a loaded host whose first tokens came after 300 ms), aimed
    // instants fill it: before the first token (routed, 60-250 ms) and between the first and the last (600-1,200 ms).
    for (let extra = 0; extra < EXTRA_RUNS && seen.failedBeforeFirstToken === 0; extra++)
      await hangUpAndCheck(true, Math.floor(60 + random() * 190));
    for (let extra = 0; extra < EXTRA_RUNS && seen.midStream === 0; extra++)
      await hangUpAndCheck(true, Math.floor(600 + random() * 600));
    console.log(`[disconnect] seed ${SEED}: ${JSON.stringify(seen)}`);
    // The instants covered the request's life: jobs ended before their first token and mid-stream.
    expect(seen.failedBeforeFirstToken, cases.join("\n")).toBeGreaterThan(0);
    expect(seen.midStream, cases.join("\n")).toBeGreaterThan(0);
    // From the chain: nothing stays locked, and the balance moved by exactly what the job resources charged.
    const jobs = await jobsOf(client.apiKey);
    const charged = jobs.reduce((sum, job) => sum + BigInt(job.credits_charged ?? 0), 0n);
    await waitFor("every escrow closed on chain", async () => (await accountOf(client.wallet)).locked === 0n);
    const after = await accountOf(client.wallet);
    expect(after.available + after.locked, cases.join("\n")).toBe(before.available + before.locked - charged);
  }, 300_000);
});

describe("item 3: the web sign-in is bound to the configured origin, never to the Host header", () => {
  async function signIn(domain: string, host: string): Promise<RawResponse> {
    const { account } = await freshAccount();
    const nonce = (await rawRequest("POST", "/app/siwe/nonce")).json<{ nonce: string }>().nonce;
    const message = createSiweMessage({
      domain,
      uri: `http://${domain}`,
      address: account.address,
      chainId: stackInfo().chainId,
      nonce,
      version: "1",
      issuedAt: new Date(),
    });
    const signature = await account.signMessage!({ message });
    return rawRequest("POST", "/app/siwe/login", { body: { message, signature }, headers: { host } });
  }

  it("error: a message signed for evil.example, posted with Host: evil.example, is refused app_sign_in_failed", async () => {
    const response = await signIn("evil.example", "evil.example");
    expectErrorBody(response, 401, "app_sign_in_failed");
    expect(response.headers["set-cookie"]).toBeUndefined();
  });

  it("a message signed for the stack's printed origin signs in whatever Host the request carries", async () => {
    const response = await signIn(hostOf(), "evil.example");
    expect(response.status, response.body).toBe(200);
  });
});

describe("item 4: the burst limit counts the connection's address unless a configured proxy names the client", () => {
  const BURST = 5;

  async function statusesWithRotatingForwardedFor(baseUrl: string, count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const response = await rawRequest("GET", "/healthz", {
        baseUrl,
        headers: { "x-forwarded-for": `203.0.113.${i}`, forwarded: `for=198.51.100.${i}` },
      });
      statuses.push(response.status);
    }
    return statuses;
  }

  it("error: a rotating X-Forwarded-For sent straight to a gateway (no TRUSTED_PROXIES) is still limited", async () => {
    const gateway = await startExtraGateway(
      { RATE_LIMIT_MAX: String(BURST), RATE_LIMIT_WINDOW_MS: "60000" },
      "api_xff_direct",
    );
    const statuses = await statusesWithRotatingForwardedFor(gateway.apiUrl, BURST + 3);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(3);
  });

  it("error: behind the local proxy (trusted), a client's own X-Forwarded-For is replaced and still limited", async () => {
    const gateway = await startExtraGateway(
      { RATE_LIMIT_MAX: String(BURST), RATE_LIMIT_WINDOW_MS: "60000", TRUSTED_PROXIES: "loopback" },
      "api_xff_proxy",
    );
    const proxy = await startGatewayProxy({ port: 0, upstreams: [gateway.apiUrl], docsUrl: "http://127.0.0.1/docs" });
    try {
      const statuses = await statusesWithRotatingForwardedFor(proxy.url, BURST + 3);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(3);
    } finally {
      await proxy.stop();
    }
  });

  it("the local proxy sets X-Forwarded-For to the address it saw and drops Forwarded and X-Real-IP", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const upstream = http.createServer((req, res) => {
      seen.push(req.headers);
      res.end("ok");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const proxy = await startGatewayProxy({
      port: 0,
      upstreams: [`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`],
      docsUrl: "http://127.0.0.1/docs",
    });
    try {
      await rawRequest("GET", "/", {
        baseUrl: proxy.url,
        headers: { "x-forwarded-for": "203.0.113.7", forwarded: "for=203.0.113.7", "x-real-ip": "203.0.113.7" },
      });
      expect(seen[0]?.["x-forwarded-for"]).toBe("127.0.0.1");
      expect(seen[0]?.forwarded).toBeUndefined();
      expect(seen[0]?.["x-real-ip"]).toBeUndefined();
    } finally {
      await proxy.stop();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });
});

describe("items 6 and 8: malformed and slow HTTP is answered in the spec's error format, within seconds", () => {
  function expectSpecError(text: string, status: number, code: string): void {
    expect(text, text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(text.toLowerCase()).toContain("content-type: application/json");
    const body = bodyOf(text);
    expect(body.error?.code).toBe(code);
    expect(typeof body.error?.message).toBe("string");
  }

  it("error: an HTTP/1.1 request without Host is 400 invalid_request with the spec's body", async () => {
    const { text } = await exchange("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    expectSpecError(text, 400, "invalid_request");
  });

  it("error: a request with two Host headers is 400 invalid_request (RFC 9112 §3.2)", async () => {
    const { text } = await exchange(
      `GET /healthz HTTP/1.1\r\nHost: ${hostOf()}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
    );
    expectSpecError(text, 400, "invalid_request");
  });

  it("error: a header line that is not HTTP is 400 invalid_request with the spec's body", async () => {
    const { text } = await exchange(`GET /healthz HTTP/1.1\r\nHost: ${hostOf()}\r\nBad Header\r\n\r\n`);
    expectSpecError(text, 400, "invalid_request");
  });

  it("error: headers trickled one byte a second are cut off with 408 request_timeout within 7 s", async () => {
    const url = new URL(stackInfo().apiUrl);
    const started = Date.now();
    const text = await new Promise<string>((resolve, reject) => {
      let received = "";
      const socket = connect(Number(url.port), url.hostname, () => socket.write("GET /healthz HTTP/1.1\r\nX-A: "));
      const drip = setInterval(() => socket.write("a"), 1_000);
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
      socket.on("close", () => {
        clearInterval(drip);
        resolve(received);
      });
      socket.on("error", (error) => (received ? resolve(received) : reject(error)));
    });
    expect(Date.now() - started).toBeLessThan(7_000);
    expectSpecError(text, 408, "request_timeout");
  }, 20_000);

  it("error: a body trickled one byte a second is cut off with 408 request_timeout within the request timeout", async () => {
    const url = new URL(stackInfo().apiUrl);
    const body = JSON.stringify(chatBody("llama-3.2-3b-instruct"));
    const started = Date.now();
    const text = await new Promise<string>((resolve, reject) => {
      let received = "";
      let sent = 0;
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(
          `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${stackInfo().demo.apiKey}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        ),
      );
      const drip = setInterval(() => {
        if (sent < body.length) socket.write(body[sent++]!);
      }, 1_000);
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
      socket.on("close", () => {
        clearInterval(drip);
        resolve(received);
      });
      socket.on("error", (error) => (received ? resolve(received) : reject(error)));
    });
    // HTTP_REQUEST_TIMEOUT_MS (15 s) plus the 0.5 s check interval; before: 207 s.
    expect(Date.now() - started).toBeLessThan(18_000);
    expectSpecError(text, 408, "request_timeout");
  }, 30_000);

  it("an idle connection that sends nothing is closed within seconds", async () => {
    const { closed, elapsedMs } = await exchange("", { timeoutMs: 15_000 });
    expect(closed).toBe(true);
    expect(elapsedMs).toBeLessThan(8_000);
  }, 20_000);

  it("a healthy stream longer than the header timeout runs to [DONE] uncut", async () => {
    const client = await createClientWallet({ usdg: 2n });
    const model = await claimCatalogModel("long-stream", { tier: "lite" });
    // 6.5 s of stream: longer than the 5 s HTTP_HEADERS_TIMEOUT_MS, within the test stack's 8 s job timeout (a
    // stream longer than the request timeout: api/http/createHttpServer.test.ts).
    await startExtraWorker(
      { models: [model], ttftMs: 100, tokensPerSecond: 10, minOutputTokens: 64, maxOutputTokens: 64 },
      client.apiKey,
    );
    const started = Date.now();
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(model, { stream: true, max_tokens: 64 }),
    });
    expect(Date.now() - started).toBeGreaterThan(5_500);
    expect(response.status).toBe(200);
    expect(response.body).toContain("data: [DONE]");
  }, 60_000);
});

describe("item 7: /app/rpc serves signed-in sessions only the web app's methods, bounded", () => {
  let cookie: string;

  beforeAll(async () => {
    const { account } = await freshAccount();
    const nonce = (await rawRequest("POST", "/app/siwe/nonce")).json<{ nonce: string }>().nonce;
    const message = createSiweMessage({
      domain: hostOf(),
      uri: `http://${hostOf()}`,
      address: account.address,
      chainId: stackInfo().chainId,
      nonce,
      version: "1",
      issuedAt: new Date(),
    });
    const signature = await account.signMessage!({ message });
    const login = await rawRequest("POST", "/app/siwe/login", { body: { message, signature } });
    expect(login.status, login.body).toBe(200);
    cookie = (login.headers["set-cookie"]?.[0] ?? "").split(";")[0]!;
  });

  const call = (method: string, params: unknown[] = [], headers: Record<string, string> = {}) =>
    rawRequest("POST", "/app/rpc", { body: { jsonrpc: "2.0", id: 1, method, params }, headers });

  it("error: a contract read without a session is 401 app_session_required", async () => {
    expectErrorBody(await call("eth_blockNumber"), 401, "app_session_required");
  });

  it("a signed-in session reads the chain", async () => {
    const response = await call("eth_blockNumber", [], { cookie });
    expect(response.status, response.body).toBe(200);
    expect(response.json<{ result: string }>().result).toMatch(/^0x/);
  });

  it("error: eth_getLogs is not served, even to a session", async () => {
    const response = await call("eth_getLogs", [{ fromBlock: "0x0" }], { cookie });
    expectErrorBody(response, 400, "invalid_request");
  });

  it("error: an answer over RPC_ANSWER_MAX_BYTES is refused, not buffered (10 reads of a 30 KB transaction)", async () => {
    const { account } = await freshAccount();
    const hash = await walletClient(account).sendTransaction({
      to: account.address,
      data: `0x${"ab".repeat(30_000)}`,
    });
    await mined(hash);
    const one = await call("eth_getTransactionByHash", [hash]);
    expect(one.status, one.body.slice(0, 200)).toBe(200);
    const batch = Array.from({ length: 10 }, (_, id) => ({
      jsonrpc: "2.0",
      id,
      method: "eth_getTransactionByHash",
      params: [hash],
    }));
    const response = await rawRequest("POST", "/app/rpc", { body: batch });
    const error = expectErrorBody(response, 400, "invalid_request");
    expect(error.message).toContain(String(RPC_ANSWER_MAX_BYTES));
  });

  it("blocks come without their transactions' bodies, whatever the caller asked", async () => {
    const response = await call("eth_getBlockByNumber", ["latest", true], { cookie });
    const block = response.json<{ result: { transactions: unknown[] } }>().result;
    for (const tx of block.transactions) expect(typeof tx).toBe("string");
  });
});

describe("item 9: small ones", () => {
  it("error: temperature 1e309 is invalid_request 'must be a finite number', naming temperature", async () => {
    const body = `{"model":"llama-3.2-3b-instruct","messages":[{"role":"user","content":"hi"}],"temperature":1e309}`;
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: stackInfo().demo.apiKey, body });
    const error = expectErrorBody(response, 400, "invalid_request", { param: "temperature" });
    expect(error.message).toContain("must be a finite number");
  });

  it("error: a webhook URL with CR LF is refused, not stored", async () => {
    const owner = await createClientWallet({ usdg: 0n });
    const response = await rawRequest("POST", "/v1/webhooks", {
      apiKey: owner.apiKey,
      body: { url: "https://receiver.example/a\r\nb", events: ["job.completed"] },
    });
    expectErrorBody(response, 400, "invalid_request", { param: "url" });
    const list = await rawRequest("GET", "/v1/webhooks", { apiKey: owner.apiKey });
    expect(list.json<{ data: unknown[] }>().data).toEqual([]);
  });

  it("/app/config's explorer_url comes from configuration, never from the Host header", async () => {
    const response = await rawRequest("GET", "/app/config", { headers: { host: "evil.example" } });
    expect(response.status).toBe(200);
    const explorerUrl = response.json<{ explorer_url: string }>().explorer_url;
    expect(explorerUrl).not.toContain("evil.example");
    expect(explorerUrl).toBe(`${new URL(stackInfo().apiUrl).origin}/tx`);
  });
});
