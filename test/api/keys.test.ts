import pg from "pg";
import { describe, expect, it } from "vitest";
import { keyHashOf } from "@credit-metered/client";
import { API_SCHEMA, INDEXER_SCHEMA } from "../../scripts/stack/startLocalStack.js";
import { stackInfo } from "../support/stackInfo.js";
import { accountOf, apiKeyRegistryAbi, contracts, mined, operatorAccount, walletClient } from "../support/chain.js";
import { chatBody, expectErrorBody, rawRequest } from "../support/api.js";
import { createClientWallet } from "../support/wallets.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

const MODEL = "llama-3.2-3b-instruct";

describe("keys revoked or suspended on chain", () => {
  it("error: invalid_api_key (401) on the very next request after the wallet revokes its key", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const first = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(MODEL) });
    expect(first.status, first.body).toBe(200);
    await waitFor("the first request settled", async () => (await accountOf(client.wallet)).locked === 0n);
    const before = await accountOf(client.wallet);

    await mined(
      await walletClient(client.account).writeContract({
        address: contracts().apiKeyRegistry,
        abi: apiKeyRegistryAbi,
        functionName: "revokeKey",
      }),
    );

    // No waiting for the index: revocation is instant for all later requests (spec, Authentication 7).
    const completion = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: chatBody(MODEL),
    });
    expectErrorBody(completion, 401, "invalid_api_key", { param: null });
    // Refused at authentication, or — when the index has not seen the revocation yet — by the escrow, which skips
    // the lock (JobOpenSkipped): the job stops and no credit moves either way (docs/DESIGN.md "Reservation ledger").
    const after = await accountOf(client.wallet);
    expect(after.available).toBe(before.available);
    expect(after.locked).toBe(0n);
    const account = await rawRequest("GET", "/v1/account", { apiKey: client.apiKey });
    expectErrorBody(account, 401, "invalid_api_key", { param: null });
  });

  it("a key served a moment ago is refused at authentication once the index has its revocation", async () => {
    const client = await createClientWallet({ usdg: 1n });
    // Served twice: the second answer may come from the gateway's memory of active keys (api/ledger/activeKeyCache.ts).
    for (let i = 0; i < 2; i++) {
      const served = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(MODEL) });
      expect(served.status, served.body).toBe(200);
    }
    await mined(
      await walletClient(client.account).writeContract({
        address: contracts().apiKeyRegistry,
        abi: apiKeyRegistryAbi,
        functionName: "revokeKey",
      }),
    );
    const db = new pg.Client(stackInfo().databaseUrl);
    await db.connect();
    try {
      const keyHash = keyHashOf(client.apiKey).toLowerCase();
      await waitFor("the index to have the revocation", async () => {
        const { rows } = await db.query<{ status: string }>(
          `SELECT status FROM ${INDEXER_SCHEMA}.api_key WHERE key_hash = $1`,
          [keyHash],
        );
        return rows[0]?.status === "revoked";
      });
      const jobs = async () =>
        (
          await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${API_SCHEMA}.gateway_job WHERE key_hash = $1`, [
            keyHash,
          ])
        ).rows[0]?.n;
      const before = await jobs();
      const refused = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: client.apiKey,
        body: chatBody(MODEL),
      });
      expectErrorBody(refused, 401, "invalid_api_key", { param: null });
      // Refused before any job existed: by authentication, not by the escrow skipping the lock of a remembered key.
      expect(await jobs()).toBe(before);
    } finally {
      await db.end();
    }
  });

  it("error: key_suspended (403) once an operator suspends the wallet", async () => {
    const client = await createClientWallet({ usdg: 1n });
    await mined(
      await walletClient(operatorAccount).writeContract({
        address: contracts().apiKeyRegistry,
        abi: apiKeyRegistryAbi,
        functionName: "suspend",
        args: [client.wallet],
      }),
    );
    let response = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(MODEL) });
    await waitFor("the suspension to reach the gateway", async () => {
      response = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(MODEL) });
      return response.status === 403;
    });
    expectErrorBody(response, 403, "key_suspended", { param: null });
  });

  it("a suspended key works again after the operator lifts the suspension", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const registry = { address: contracts().apiKeyRegistry, abi: apiKeyRegistryAbi } as const;
    await mined(
      await walletClient(operatorAccount).writeContract({
        ...registry,
        functionName: "suspend",
        args: [client.wallet],
      }),
    );
    await waitFor("suspended", async () => {
      return (await rawRequest("GET", "/v1/account", { apiKey: client.apiKey })).status === 403;
    });
    await mined(
      await walletClient(operatorAccount).writeContract({
        ...registry,
        functionName: "unsuspend",
        args: [client.wallet],
      }),
    );
    await waitFor("reinstated", async () => {
      return (await rawRequest("GET", "/v1/account", { apiKey: client.apiKey })).status === 200;
    });
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: client.apiKey, body: chatBody(MODEL) });
    expect(response.status, response.body).toBe(200);
  });
});
