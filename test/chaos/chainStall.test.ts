import { beforeAll, describe, expect, it } from "vitest";
import { indexedBlockNumber } from "../../scripts/stack/waitForIndexedBlock.js";
import { publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { call, completionBody, startLoad, summarise, violations } from "./support/clientLoad.js";
import { expectConserved, frozenFor, gatewayGauge, report } from "./support/faults.js";
import { sleep, waitFor } from "../../scripts/stack/waitFor.js";

// Issue 12, items 1 and 3: the chain node stops answering (SIGSTOP) for 15 s, then for 25 s, while a client keeps
// sending completions. Reads answer from what the gateway knows, auth does not wait on the node, completions get
// 200 or a retryable 503 (never a 500 or a hang), and the index catches up within seconds of the node resuming.

const MODEL = "qwen3-1.7b";
/** The "within seconds": the index reaches the chain head (as of the resume) within this bound. */
const INDEX_CATCH_UP_BOUND_MS = 10_000;
/** A read during the stall must not wait on the node (auth included): the auth deadline (0.3 s) plus an index read. */
const READ_BOUND_MS = 2_000;

let client: ClientWallet;

beforeAll(async () => {
  client = await createClientWallet({ usdg: 10n });
  // One completion before any freeze: the wallet has a job to list and a row in the index. Completions authenticate
  // from the index, so this says nothing about the chain key cache; the reads during the freeze answer from what the
  // gateway last knew (the index's rows, or /v1/account's last answer for the key, marked stale).
  expect((await call("POST", "/v1/chat/completions", client.apiKey, completionBody(MODEL))).status).toBe(200);
});

async function chainHead(): Promise<number> {
  return Number(await publicClient().getBlockNumber({ cacheTime: 0 }));
}

describe.each([15_000, 25_000])("the chain node frozen for %i ms", (stallMs) => {
  it("reads answer from the last known state, completions stay 200 or retryable 503, the index catches up, credits conserved", async () => {
    const load = startLoad(client.apiKey, MODEL);
    await sleep(1_500);
    const { result: during, resumedAt } = await frozenFor("chain", stallMs, async () => {
      // Let the gateway notice (one lag sample, one missed key-status deadline).
      await sleep(2_000);
      const [account, jobs, models, ready] = await Promise.all([
        call("GET", "/v1/account", client.apiKey),
        call("GET", "/v1/jobs?limit=5", client.apiKey),
        call("GET", "/v1/models", client.apiKey),
        fetch(`${stackInfo().apiUrl}/readyz`, { signal: AbortSignal.timeout(10_000) }),
      ]);
      return { account, jobs, models, readyStatus: ready.status, readyBody: await ready.text() };
    });

    // During the stall: reads answered quickly from what the gateway knew, saying how stale.
    for (const [path, read] of Object.entries({ account: during.account, jobs: during.jobs, models: during.models })) {
      // The answer itself on failure: which read, and the error the gateway gave for it.
      expect(read.status, `${path}: ${JSON.stringify(read.json)}`).toBe(200);
      expect(read.ms, path).toBeLessThan(READ_BOUND_MS);
    }
    expect(Number(during.account.headers?.get("x-service-stale-seconds"))).toBeGreaterThanOrEqual(1);
    expect(during.readyStatus).toBe(503);
    expect(during.readyBody).toContain("chain unavailable");

    // After: the index reaches the head the chain had when it came back, within the bound.
    await sleep(300);
    const target = await chainHead();
    await waitFor("index at the chain head", async () => (await indexedBlockNumber(stackInfo().indexerUrl)) >= target, {
      timeoutMs: INDEX_CATCH_UP_BOUND_MS,
      intervalMs: 100,
    });
    const indexCaughtUpMs = Date.now() - resumedAt;
    await waitFor(
      "gateway ready again",
      async () => {
        const ready = await fetch(`${stackInfo().apiUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
        if (ready.status === 200) return true;
        // Named in the timeout error: which check held readiness back (lag, a pending transaction, a dependency).
        throw new Error(`${ready.status} ${await ready.text()}`);
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    const readyAt = Date.now();
    const readyAgainMs = readyAt - resumedAt;
    // The gauge is the gateway's last lag sample (one a second, each a chain and an index read, which take longer
    // under this load): read at one instant right after /readyz (ready up to 30 s of lag) it can still be a sample
    // from the catch-up. Under CI's load it once read 10.6 s there. What must hold is that it says "caught up"
    // within a few samples of the index reaching the head.
    await waitFor(
      "the gateway's index lag gauge under 5 s",
      async () => ((await gatewayGauge("gateway_index_lag_seconds")) ?? Infinity) < 5,
      {
        timeoutMs: 5_000,
        intervalMs: 200,
      },
    );

    // Completions work again right away.
    await sleep(4_000);
    const outcomes = await load.stop();
    const after = outcomes.filter((outcome) => outcome.at > readyAt + 1_000);
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((outcome) => outcome.status)).toEqual(after.map(() => 200));
    expect(violations(outcomes)).toEqual([]);

    const audit = await expectConserved();
    report(`chain node SIGSTOP ${stallMs / 1000} s`, {
      clients: summarise(outcomes),
      readsDuringStallMs: { account: during.account.ms, jobs: during.jobs.ms, models: during.models.ms },
      indexCaughtUpMs,
      readyAgainMs,
      audit,
    });
  });
});
