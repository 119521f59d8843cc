import type { Account, Address } from "viem";
import { describe, expect, it } from "vitest";
import { chatBody, expectErrorBody, rawRequest } from "../support/api.js";
import {
  accountOf,
  chainTime,
  contracts,
  creditEscrowAbi,
  mined,
  publicClient,
  walletClient,
} from "../support/chain.js";
import { createClientWallet } from "../support/wallets.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

// The wallet's own hourly spending cap (CreditEscrow.setSpendingCap), enforced by the escrow at openJob and answered
// by the gateway as 402 spending_cap_exceeded (api/README.md "Spending cap").

const MODEL = "llama-3.2-3b-instruct";
/** A lite-tier request with max_tokens 100 locks 2 credits (test/api/errors.test.ts, insufficient_credits). */
const REQUEST = chatBody(MODEL, { max_tokens: 100 });
const CREDITS_PER_REQUEST = 2;
/** The escrow counts a lock for up to four 20-minute slots (contracts/libraries/SpendWindow.sol). */
const SLOT_SECONDS = 1_200;
const LONGEST_COUNT_SECONDS = 4 * SLOT_SECONDS;

function complete(apiKey: string, body: unknown = REQUEST) {
  return rawRequest("POST", "/v1/chat/completions", { apiKey, body });
}

/** The same transaction the web app's Settings page sends (web/src/chain/spendingCap.ts). */
async function setCap(account: Account, creditsPerHour: bigint): Promise<void> {
  await mined(
    await walletClient(account).writeContract({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      functionName: "setSpendingCap",
      args: [creditsPerHour],
      chain: undefined,
    }),
  );
}

async function spendingOf(wallet: Address) {
  const [cap, lockedInWindow, nextRoomAt] = await publicClient().readContract({
    address: contracts().creditEscrow,
    abi: creditEscrowAbi,
    functionName: "spendingOf",
    args: [wallet],
  });
  return { cap, lockedInWindow, nextRoomAt };
}

/** The wallet's escrow account once every lock of its finished requests has been settled. */
async function settledAccount(wallet: Address) {
  await waitFor("nothing locked for the wallet", async () => (await accountOf(wallet)).locked === 0n);
  return accountOf(wallet);
}

describe("hourly spending cap", () => {
  it("serves requests whose locks stay within the cap", async () => {
    const client = await createClientWallet();
    await setCap(client.account, BigInt(2 * CREDITS_PER_REQUEST));
    for (let i = 0; i < 2; i++) {
      const response = await complete(client.apiKey);
      expect(response.status, response.body).toBe(200);
    }
    const spending = await spendingOf(client.wallet);
    expect(spending.cap).toBe(BigInt(2 * CREDITS_PER_REQUEST));
    expect(spending.lockedInWindow).toBe(BigInt(2 * CREDITS_PER_REQUEST));
  });

  it("error: the request that would exceed the cap gets 402 spending_cap_exceeded with when room frees up", async () => {
    const client = await createClientWallet();
    const cap = 2 * CREDITS_PER_REQUEST + 1;
    await setCap(client.account, BigInt(cap));
    for (let i = 0; i < 2; i++) expect((await complete(client.apiKey)).status).toBe(200);

    const now = Number(await chainTime());
    const response = await complete(client.apiKey);
    const error = expectErrorBody(response, 402, "spending_cap_exceeded", { type: "payment_error", param: null });
    expect(error.details).toEqual({
      hourly_cap: cap,
      credits_locked_last_hour: 2 * CREDITS_PER_REQUEST,
      credits_required: CREDITS_PER_REQUEST,
      room_at: expect.any(String),
      retry_after: expect.any(Number),
    });
    const roomAt = Date.parse(error.details!.room_at as string) / 1000;
    expect(new Date(roomAt * 1000).toISOString()).toBe(error.details!.room_at);
    // Room comes back when the earlier requests' slot stops counting: a slot boundary at most 80 minutes away.
    expect(roomAt % SLOT_SECONDS).toBe(0);
    expect(roomAt).toBeGreaterThan(now);
    expect(roomAt).toBeLessThanOrEqual(now + LONGEST_COUNT_SECONDS);
    const retryAfter = error.details!.retry_after as number;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(LONGEST_COUNT_SECONDS);
    expect(response.headers["retry-after"]).toBe(String(retryAfter));
  });

  it("the chain's spendingOf names the same time room frees up as the refusal's room_at", async () => {
    const client = await createClientWallet();
    await setCap(client.account, BigInt(2 * CREDITS_PER_REQUEST + 1));
    for (let i = 0; i < 2; i++) expect((await complete(client.apiKey)).status).toBe(200);

    const error = expectErrorBody(await complete(client.apiKey), 402, "spending_cap_exceeded");
    const { nextRoomAt } = await spendingOf(client.wallet);
    // What the web app's Settings page shows as "room frees up at" (web/src/components/SpendingCapPanel.tsx).
    expect(new Date(Number(nextRoomAt) * 1000).toISOString()).toBe(error.details!.room_at);
  });

  it("error: a refused request locks nothing and leaves the balance unchanged", async () => {
    const client = await createClientWallet();
    await setCap(client.account, BigInt(CREDITS_PER_REQUEST));
    expect((await complete(client.apiKey)).status).toBe(200);
    const before = await settledAccount(client.wallet);

    const response = await complete(client.apiKey);
    expectErrorBody(response, 402, "spending_cap_exceeded");

    const after = await accountOf(client.wallet);
    expect(after.locked).toBe(0n);
    expect(after.available).toBe(before.available);
    expect((await spendingOf(client.wallet)).lockedInWindow).toBe(BigInt(CREDITS_PER_REQUEST));
  });

  it("error: a request that exceeds the cap by itself has room_at null and no Retry-After", async () => {
    const client = await createClientWallet();
    await setCap(client.account, BigInt(CREDITS_PER_REQUEST - 1));
    const before = await accountOf(client.wallet);

    const response = await complete(client.apiKey);
    const error = expectErrorBody(response, 402, "spending_cap_exceeded", { type: "payment_error" });
    expect(error.details).toEqual({
      hourly_cap: CREDITS_PER_REQUEST - 1,
      credits_locked_last_hour: 0,
      credits_required: CREDITS_PER_REQUEST,
      room_at: null,
      retry_after: null,
    });
    expect(response.headers["retry-after"]).toBeUndefined();
    const after = await accountOf(client.wallet);
    expect(after.locked).toBe(0n);
    expect(after.available).toBe(before.available);
  });

  it("no cap by default: a wallet's requests are limited only by its balance", async () => {
    const client = await createClientWallet();
    expect(await spendingOf(client.wallet)).toEqual({ cap: 0n, lockedInWindow: 0n, nextRoomAt: 0n });
    // Far more than any cap used above: 5 max-tier requests locking 60 credits each.
    const big = chatBody("llama-3.3-70b-instruct", { max_tokens: 1_500 });
    for (let i = 0; i < 5; i++) {
      const response = await complete(client.apiKey, big);
      expect(response.status, response.body).toBe(200);
    }
    expect((await spendingOf(client.wallet)).cap).toBe(0n);
  });
});
