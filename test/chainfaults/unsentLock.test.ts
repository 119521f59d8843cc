import { beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { expectConserved, report } from "../chaos/support/faults.js";
import { stackInfo } from "../support/stackInfo.js";
import { chainStatusOf, rpc } from "./chainRpc.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";

// Issue 26, "Routed once the lock is signed" (docs/DESIGN.md): a job is routed as soon as its lock batch is signed,
// before any node has taken the transaction. When no node takes it (here: the gateway's signer has no ether for
// gas, so every endpoint refuses the transaction outright), the routed job must stop like a lock the escrow
// skipped: the client gets a clear retryable error (503 with the job's headers), is charged nothing, nothing is
// locked on chain, and once the signer can pay again the gateway serves (its nonce gap is filled).

const FUNDED = `0x${(10n ** 21n).toString(16)}`;

let client: ClientWallet;
let model: string;

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${stackInfo().apiUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${client.apiKey}`, "content-type": "application/json" },
    signal: AbortSignal.timeout(30_000),
  });
}

async function creditsRemaining(): Promise<number> {
  const account = (await (await call("/v1/account")).json()) as { credits_remaining: number };
  return account.credits_remaining;
}

function complete(stream: boolean): Promise<Response> {
  return call("/v1/chat/completions", {
    method: "POST",
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Say something." }], stream, max_tokens: 8 }),
  });
}

beforeAll(async () => {
  client = await createClientWallet({ usdg: 5n });
  model = await claimCatalogModel("unsent-lock", { tier: "lite" });
  // Slow to its first token, so the refusal reaches the routed job before any token does.
  await startExtraWorker(
    { models: [model], ttftMs: 3_000, tokensPerSecond: 40, minOutputTokens: 4, maxOutputTokens: 4 },
    client.apiKey,
  );
}, 120_000);

describe("a lock batch no node takes, after its job was routed", () => {
  it("stops the job with a retryable error, charges nothing, and the gateway serves again once the node takes its transactions", async () => {
    const signer = stackInfo().gateways[0]!.signer;
    const before = await creditsRemaining();
    const balance = (await rpc("eth_getBalance", [signer, "latest"])) as string;
    await rpc("hardhat_setBalance", [signer, "0x0"]);
    let answer: Response;
    const started = Date.now();
    try {
      answer = await complete(true);
    } finally {
      await rpc("hardhat_setBalance", [signer, balance === "0x0" ? FUNDED : balance]);
    }
    const answeredMs = Date.now() - started;
    const body = (await answer.json()) as { error: { code: string; type: string } };
    const jobId = answer.headers.get("x-service-job-id");
    const after = await creditsRemaining();

    expect(answer.status).toBe(503);
    expect(body.error.code).toBe("service_unavailable");
    expect(jobId).toMatch(/^job_/);
    expect(answer.headers.get("x-service-tx-hash")).toMatch(/^0x[0-9a-f]{64}$/);
    expect(after, "the wallet's credits on chain").toBe(before);
    const job = (await (await call(`/v1/jobs/${jobId}`)).json()) as { status: string; credits_charged: number | null };
    expect(job.status).toBe("failed");
    expect(job.credits_charged ?? 0).toBe(0);
    expect(await chainStatusOf(jobId!)).toBe("none");

    // The signer can pay again: the gap its refused nonce left is filled and the next request is served.
    const next = await waitFor(
      "a request served after the signer was funded again",
      async () => {
        const response = await complete(false);
        return response.status === 200 ? response : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    report("lock batch no node takes", { answeredMs, status: answer.status, next: next.status });
    await expectConserved();
  });
});
