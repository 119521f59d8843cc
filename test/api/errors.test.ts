import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, expectErrorBody, openaiFor, rawRequest } from "../support/api.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet } from "../support/wallets.js";
import { claimCatalogModel } from "../support/workers.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

const MODEL = "llama-3.2-3b-instruct";

function demoKey(): string {
  return stackInfo().demo.apiKey;
}

/** A completion request with the demo key, another key, or (null) no Authorization header at all. */
function complete(body: unknown, apiKey: string | null = demoKey()) {
  return rawRequest("POST", "/v1/chat/completions", { ...(apiKey === null ? {} : { apiKey }), body });
}

describe("authentication errors", () => {
  it("error: missing_api_key (401) without an Authorization header", async () => {
    const response = await complete(chatBody(MODEL), null);
    expectErrorBody(response, 401, "missing_api_key", { param: null });
  });

  it("error: invalid_api_key (401) for a well-formed key nobody registered", async () => {
    const response = await complete(chatBody(MODEL), `svc_live_${"A".repeat(32)}`);
    expectErrorBody(response, 401, "invalid_api_key", { param: null });
  });

  it("error: invalid_api_key (401) for a key that is not in the svc_live_ format", async () => {
    const response = await complete(chatBody(MODEL), "sk-not-a-service-key");
    expectErrorBody(response, 401, "invalid_api_key", { param: null });
  });

  it("error: the SDK surfaces invalid_api_key as an AuthenticationError with the code", async () => {
    const openai = openaiFor(`svc_live_${"B".repeat(32)}`);
    const error = await openai.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hi" }] })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_api_key");
  });

  it("error: authentication applies to every endpoint, not only completions", async () => {
    for (const path of ["/v1/models", "/v1/jobs", "/v1/account"]) {
      expectErrorBody(await rawRequest("GET", path), 401, "missing_api_key");
    }
  });
});

describe("invalid_request (400) names the offending parameter", () => {
  it("error: a message role outside system/user/assistant", async () => {
    const response = await complete({ model: MODEL, messages: [{ role: "robot", content: "beep" }] });
    expectErrorBody(response, 400, "invalid_request", { param: "messages.0.role" });
  });

  it("error: missing messages", async () => {
    const response = await complete({ model: MODEL });
    expectErrorBody(response, 400, "invalid_request", { param: "messages" });
  });

  it("error: temperature above 2", async () => {
    const response = await complete(chatBody(MODEL, { temperature: 3 }));
    expectErrorBody(response, 400, "invalid_request", { param: "temperature" });
  });

  it("error: tools are not offered", async () => {
    const tools = [{ type: "function", function: { name: "get_time", parameters: { type: "object" } } }];
    const response = await complete(chatBody(MODEL, { tools }));
    expectErrorBody(response, 400, "invalid_request", { param: "tools" });
  });

  it("error: a body that is not JSON", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", { apiKey: demoKey(), body: "{not json" });
    expectErrorBody(response, 400, "invalid_request");
  });

  it("error: nothing is locked for an invalid request (no job header)", async () => {
    const response = await complete(chatBody(MODEL, { temperature: 3 }));
    expect(response.headers["x-service-job-id"]).toBeUndefined();
    expect(response.headers["x-service-tx-hash"]).toBeUndefined();
  });
});

describe("model and capacity errors", () => {
  it("error: model_not_found (400) for an id the catalog does not have", async () => {
    const response = await complete(chatBody("no-such-model-anywhere"));
    expectErrorBody(response, 400, "model_not_found", { type: "invalid_request_error", param: "model" });
  });

  it("error: context_length_exceeded (400) when the messages exceed a 32768-token window", async () => {
    const long = "escrow ".repeat(40_000);
    const response = await complete({ model: "qwen3-1.7b", messages: [{ role: "user", content: long }] });
    expectErrorBody(response, 400, "context_length_exceeded", { param: "messages" });
  });

  it("error: no_workers_available (503) with model and retry_after for a listed model nobody hosts", async () => {
    const modelId = await claimCatalogModel("unhosted", { tier: "lite" });
    let response = await complete(chatBody(modelId));
    // The gateway learns of the new catalog entry through the index.
    await waitFor("the catalog entry indexed", async () => {
      response = await complete(chatBody(modelId));
      return response.status !== 400;
    });
    const error = expectErrorBody(response, 503, "no_workers_available", { type: "capacity_error" });
    expect(error.details?.model).toBe(modelId);
    expect(Number.isInteger(error.details?.retry_after)).toBe(true);
    expect(error.details?.retry_after as number).toBeGreaterThan(0);
  });
});

describe("insufficient_credits (402)", () => {
  let emptyKey: string;

  beforeAll(async () => {
    emptyKey = (await createClientWallet({ usdg: 0n })).apiKey;
  });

  it("error: a wallet without credits gets the balance, the escrow needed and the tier in details", async () => {
    const response = await complete(chatBody(MODEL, { max_tokens: 100 }), emptyKey);
    const error = expectErrorBody(response, 402, "insufficient_credits", { type: "payment_error" });
    expect(error.details).toEqual({ credits_remaining: 0, credits_required: 2, tier: "lite" });
  });

  it("error: the escrow estimate follows max_tokens and the tier (max tier, 1,500 tokens)", async () => {
    const response = await complete(chatBody("llama-3.3-70b-instruct", { max_tokens: 1_500 }), emptyKey);
    const error = expectErrorBody(response, 402, "insufficient_credits");
    // 40 per request + 20 per 1,000 tokens beyond 500.
    expect(error.details).toEqual({ credits_remaining: 0, credits_required: 60, tier: "max" });
  });
});
