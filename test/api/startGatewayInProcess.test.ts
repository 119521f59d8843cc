// `startGateway` in process, as other test suites use it, with the faster `submitted` lock mode and a settlement
// window wide enough to batch: concurrent requests share one nonce counter and one settleBatch transaction.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_ACCOUNT_INDEX, localPrivateKey } from "@credit-metered/client/local";
import { findFreePort } from "../../scripts/stack/ports.js";
import { stackInfo } from "../support/stackInfo.js";
import { loadConfig } from "../../api/config.js";
import { startGateway, type RunningGateway } from "../../api/main.js";

describe("startGateway (in process, LOCK_MODE=submitted, batched settlement)", () => {
  let gateway: RunningGateway;

  beforeAll(async () => {
    const info = stackInfo();
    gateway = await startGateway(
      loadConfig({
        API_PORT: String(await findFreePort(8690, 8699)),
        DATABASE_URL: info.databaseUrl,
        API_DB_SCHEMA: "api_in_process",
        INDEXER_URL: info.indexerUrl,
        RPC_URL: info.rpcUrl,
        DEPLOYMENTS_FILE: info.deploymentsFile,
        GATEWAY_PRIVATE_KEY: localPrivateKey(LOCAL_ACCOUNT_INDEX.gateway),
        WORKER_GATEWAY_TOKEN: info.gatewayToken,
        LOCK_MODE: "submitted",
        // Wide enough that the receipts of three concurrent requests fall in one window on a loaded host: at 300 ms a
        // CI run saw their answers spread so that each receipt left alone.
        SETTLEMENT_BATCH_WINDOW_MS: "2000",
        WEBHOOK_DISPATCHER_ENABLED: "false",
        RPC_POLLING_INTERVAL_MS: "50",
        LOG_LEVEL: process.env.GATEWAY_TEST_LOG_LEVEL ?? "silent",
      }),
    );
  });
  afterAll(() => gateway?.close());

  it("serves concurrent completions whose settlements share settleBatch transactions", async () => {
    const openai = new OpenAI({ apiKey: stackInfo().demo.apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const answers = await Promise.all(
      [1, 2, 3].map((n) =>
        openai.chat.completions
          .create({ model: "qwen3-1.7b", messages: [{ role: "user", content: `question ${n}` }], max_tokens: 8 })
          .withResponse(),
      ),
    );
    const escrowTxs = answers.map(({ response }) => response.headers.get("x-service-tx-hash"));
    const settlementTxs = answers.map(({ response }) => response.headers.get("x-service-settlement-tx"));
    // Locks are group-committed (openJobBatch): concurrent jobs may share one escrow transaction.
    expect(escrowTxs.every((tx) => /^0x[0-9a-f]{64}$/.test(tx ?? ""))).toBe(true);
    expect(settlementTxs.every((tx) => /^0x[0-9a-f]{64}$/.test(tx ?? ""))).toBe(true);
    // The first receipt after a quiet window leaves at once; those that follow within the window share a batch.
    expect(new Set(settlementTxs).size).toBeLessThan(settlementTxs.length);
    for (const { data } of answers) expect(data.choices[0]?.message.content).not.toBe("");
  });
});
