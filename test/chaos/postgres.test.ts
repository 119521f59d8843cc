import { beforeAll, describe, expect, it } from "vitest";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { call, completionBody, startLoad, summarise, violations } from "./support/clientLoad.js";
import { expectConserved, frozenFor, report } from "./support/faults.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Issue 12: PostgreSQL frozen (SIGSTOP of the postmaster and every backend) for 8 s while a client sends
// completions. Gateway and indexer both depend on it: answers are 200 or a retryable 503 within the database
// deadlines (never a 500, never a hang), service resumes by itself, and nothing is lost or left locked.

const MODEL = "qwen3-1.7b";

let client: ClientWallet;

beforeAll(async () => {
  client = await createClientWallet({ usdg: 10n });
  expect((await call("POST", "/v1/chat/completions", client.apiKey, completionBody(MODEL))).status).toBe(200);
});

describe("PostgreSQL frozen for 8 s", () => {
  it("answers stay 200 or retryable 503, the gateway serves again after the resume, credits conserved", async () => {
    const load = startLoad(client.apiKey, MODEL, 500);
    await sleep(1_000);
    const { resumedAt } = await frozenFor("postgres", 8_000);
    await waitFor(
      "a completion succeeds again",
      async () => (await call("POST", "/v1/chat/completions", client.apiKey, completionBody(MODEL))).status === 200,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const servingAgainMs = Date.now() - resumedAt;
    await waitFor("gateway ready again", async () => (await fetch(`${stackInfo().apiUrl}/readyz`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    const readyAgainMs = Date.now() - resumedAt;
    const outcomes = await load.stop();
    expect(violations(outcomes)).toEqual([]);
    const audit = await expectConserved();
    report("PostgreSQL SIGSTOP 8 s", { clients: summarise(outcomes), servingAgainMs, readyAgainMs, audit });
  });
});
