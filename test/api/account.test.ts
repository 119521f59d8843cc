import type { Account } from "@credit-metered/client/http";
import { describe, expect, it } from "vitest";
import { rawRequest, waitForJobStatus } from "../support/api.js";
import { accountOf, apiKeyRegistryAbi, contracts, publicClient } from "../support/chain.js";
import { createClientWallet, depositCredits } from "../support/wallets.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

describe("GET /v1/account", () => {
  it("shows the wallet, its credits and their stablecoin value, the last top-up and the key's creation time", async () => {
    const client = await createClientWallet({ usdg: 3n });
    let account: Account | undefined;
    // The top-up time comes from the index, which may trail the deposit by a block or two.
    await waitFor("the deposit indexed", async () => {
      const response = await rawRequest("GET", "/v1/account", { apiKey: client.apiKey });
      account = response.json<Account>();
      return response.status === 200 && account.last_topup_at !== null;
    });
    if (!account) throw new Error("no account");

    expect(account.wallet.toLowerCase()).toBe(client.wallet.toLowerCase());
    expect(account.credits_remaining).toBe(300);
    expect(account.usdg_value).toBe(3);
    const onChain = await accountOf(client.wallet);
    expect(Date.parse(account.last_topup_at ?? "") / 1000).toBe(Number(onChain.lastTopUpAt));
    const [, , createdAt] = await publicClient().readContract({
      address: contracts().apiKeyRegistry,
      abi: apiKeyRegistryAbi,
      functionName: "keyOf",
      args: [client.wallet],
    });
    expect(Date.parse(account.api_key_created_at ?? "") / 1000).toBe(Number(createdAt));
    expect(account.last_topup_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });

  it("follows the chain: spending lowers credits_remaining, a top-up raises it", async () => {
    const client = await createClientWallet({ usdg: 1n });
    const completion = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model: "qwen3-1.7b", messages: [{ role: "user", content: "spend" }] },
    });
    await waitForJobStatus(client.apiKey, String(completion.headers["x-service-job-id"]), "settled");
    const spent = (await rawRequest("GET", "/v1/account", { apiKey: client.apiKey })).json<Account>();
    expect(spent.credits_remaining).toBe(98);
    expect(spent.usdg_value).toBe(0.98);

    await depositCredits(client.account, 2n);
    await waitFor("top-up visible", async () => {
      const account = (await rawRequest("GET", "/v1/account", { apiKey: client.apiKey })).json<Account>();
      return account.credits_remaining === 298;
    });
  });
});
