import { createSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { expectErrorBody, rawRequest, type RawResponse } from "../support/api.js";
import { freshAccount } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";

// The web app's sign-in (EIP-4361) and session, over HTTP as a browser would use them (same origin as the app).

type Signer = Awaited<ReturnType<typeof freshAccount>>["account"];

function appHost(): string {
  return new URL(stackInfo().apiUrl).host;
}

async function nonce(): Promise<string> {
  return (await rawRequest("POST", "/app/siwe/nonce")).json<{ nonce: string }>().nonce;
}

async function signedMessage(
  account: Signer,
  overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
): Promise<{ message: string; signature: string }> {
  const message = createSiweMessage({
    domain: appHost(),
    uri: `http://${appHost()}`,
    address: account.address,
    chainId: stackInfo().chainId,
    nonce: await nonce(),
    version: "1",
    issuedAt: new Date(),
    ...overrides,
  });
  const signature = await account.signMessage!({ message });
  return { message, signature };
}

function login(body: { message: string; signature: string }): Promise<RawResponse> {
  return rawRequest("POST", "/app/siwe/login", { body });
}

function cookieOf(response: RawResponse): string {
  const header = response.headers["set-cookie"]?.[0] ?? "";
  return header.split(";")[0]!;
}

describe("web app sign-in and session (/app)", () => {
  it("opens an HttpOnly, SameSite=Strict session for a valid sign-in and /app/me names the wallet", async () => {
    const { account } = await freshAccount();
    const response = await login(await signedMessage(account));
    expect(response.status, response.body).toBe(200);
    const setCookie = response.headers["set-cookie"]?.[0] ?? "";
    expect(setCookie).toMatch(/^svc_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    const me = await rawRequest("GET", "/app/me", { headers: { cookie: cookieOf(response) } });
    expect(me.status).toBe(200);
    expect(me.json<{ wallet: string }>().wallet).toBe(account.address.toLowerCase());
  });

  it("error: a sign-in message is accepted once (the nonce is single-use)", async () => {
    const { account } = await freshAccount();
    const signed = await signedMessage(account);
    expect((await login(signed)).status).toBe(200);
    expectErrorBody(await login(signed), 401, "app_sign_in_failed");
  });

  it("error: refuses a message for another site", async () => {
    const { account } = await freshAccount();
    expectErrorBody(await login(await signedMessage(account, { domain: "evil.example" })), 401, "app_sign_in_failed");
  });

  it("error: refuses a message for another chain", async () => {
    const { account } = await freshAccount();
    expectErrorBody(await login(await signedMessage(account, { chainId: 1 })), 401, "app_sign_in_failed");
  });

  it("error: refuses a nonce the server never issued", async () => {
    const { account } = await freshAccount();
    const signed = await signedMessage(account, { nonce: "madeUpNonce12345" });
    expectErrorBody(await login(signed), 401, "app_sign_in_failed");
  });

  it("error: refuses a signature by another wallet than the message's", async () => {
    const { account } = await freshAccount();
    const { account: other } = await freshAccount();
    const { message } = await signedMessage(account);
    const signature = await other.signMessage!({ message });
    expectErrorBody(await login({ message, signature }), 401, "app_sign_in_failed");
  });

  it("error: wallet routes need a session (401 app_session_required)", async () => {
    for (const path of ["/app/me", "/app/account", "/app/jobs", "/app/webhooks", "/app/webhooks/settings"]) {
      expectErrorBody(await rawRequest("GET", path), 401, "app_session_required");
    }
    expectErrorBody(
      await rawRequest("GET", "/app/account", { headers: { cookie: `svc_session=${"A".repeat(43)}` } }),
      401,
      "app_session_required",
    );
  });

  it("logout ends the session", async () => {
    const { account } = await freshAccount();
    const cookie = cookieOf(await login(await signedMessage(account)));
    expect((await rawRequest("POST", "/app/logout", { headers: { cookie } })).status).toBe(200);
    expectErrorBody(await rawRequest("GET", "/app/me", { headers: { cookie } }), 401, "app_session_required");
  });

  it("shows a signed-in wallet only its own account and threshold", async () => {
    const { account } = await freshAccount();
    const cookie = cookieOf(await login(await signedMessage(account)));
    const accountView = await rawRequest("GET", "/app/account", { headers: { cookie } });
    expect(accountView.status).toBe(200);
    expect(accountView.json<{ wallet: string; credits_available: number; key: { status: string } }>()).toMatchObject({
      wallet: account.address.toLowerCase(),
      credits_available: 0,
      key: { status: "none" },
    });
    const settings = await rawRequest("GET", "/app/webhooks/settings", { headers: { cookie } });
    expect(settings.json<{ low_credit_threshold: number }>().low_credit_threshold).toBe(100);
  });

  it("serves the web app for client routes but never shadows the API", async () => {
    const page = await rawRequest("GET", "/tx/0x1234", { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<div id="root">');
    expectErrorBody(
      await rawRequest("GET", "/v1/nothing-here", { headers: { accept: "text/html" } }),
      401,
      "missing_api_key",
    );
    expectErrorBody(
      await rawRequest("GET", "/app/nothing-here", { headers: { accept: "text/html" } }),
      404,
      "route_not_found",
    );
  });

  it("error: the RPC proxy passes reads and refuses node administration", async () => {
    const chainId = await rawRequest("POST", "/app/rpc", { body: { jsonrpc: "2.0", id: 1, method: "eth_chainId" } });
    expect(chainId.json<{ result: string }>().result).toBe(`0x${stackInfo().chainId.toString(16)}`);
    const refused = await rawRequest("POST", "/app/rpc", {
      body: { jsonrpc: "2.0", id: 1, method: "hardhat_setBalance", params: [] },
    });
    expectErrorBody(refused, 400, "invalid_request");
  });
});
