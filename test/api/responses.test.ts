import { createHash } from "node:crypto";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import type { DisputeResult, ResponseObject, ResponseStreamEvent } from "@credit-metered/client/http";
import { JOB_ID_PATTERN, jobIdToBytes32 } from "@credit-metered/client";
import { beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody, getJob, openaiFor, rawRequest, waitForJobStatus, type Job } from "../support/api.js";
import { accountOf, contracts, creditEscrowAbi, publicClient } from "../support/chain.js";
import { stackInfo } from "../support/stackInfo.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";
import { claimCatalogModel, startExtraWorker } from "../support/workers.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { ResponseValidator } from "../../api/openapi/responseValidator.js";

// POST /v1/responses (api/README.md "The Responses API"): OpenAI's Responses API, stateless and text only, as the
// same job as a chat completion — escrow, price, headers, job resource, dispute — read through unmodified clients.

const MODEL = "llama-3.2-3b-instruct";
const TX_HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function sha256Of(text: string): string {
  return `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
}

/** `usage` as the gateway writes it: OpenAI's token counts and the charge (the SDK's type leaves it out). */
type ChargedUsage = NonNullable<ResponseObject["usage"]>;

/** Checks a response's charge against its settled job: the same figures, transactions and tokens. */
async function expectChargeMatchesJob(apiKey: string, jobId: string, usage: ChargedUsage): Promise<Job> {
  expect(usage.service.job_id).toBe(jobId);
  expect(usage.cost).toBe(usage.service.credits_charged);
  expect(usage.service.usdg_value).toBe(usage.service.credits_charged / 100);
  expect(usage.service.escrow_tx).toMatch(TX_HASH);
  expect(usage.service.worker_address).toMatch(ADDRESS);
  const job = await waitForJobStatus(apiKey, jobId, "settled");
  expect(job.credits_charged).toBe(usage.service.credits_charged);
  expect(job.credits_charged).toBeGreaterThan(0);
  expect(job.usage).toEqual({
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens,
  });
  expect(job.on_chain!.escrow_tx).toBe(usage.service.escrow_tx);
  if (usage.service.settlement_tx !== null) expect(job.on_chain!.settlement_tx).toBe(usage.service.settlement_tx);
  return job;
}

/** The `event:`/`data:` pairs of a Responses stream, in order. */
function eventsOf(body: string): { event: string; data: ResponseStreamEvent }[] {
  return body
    .split("\n\n")
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "";
      const data = lines.find((line) => line.startsWith("data: "))?.slice(6) ?? "";
      return { event, data: JSON.parse(data) as ResponseStreamEvent };
    });
}

const EVENT_ORDER = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
  "response.completed",
];

/** The event types with consecutive deltas folded into one, to compare with `EVENT_ORDER`. */
function foldedTypes(types: string[]): string[] {
  return types.filter((type, index) => type !== "response.output_text.delta" || types[index - 1] !== type);
}

describe("POST /v1/responses", () => {
  let client: ClientWallet;

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 5n });
  });

  describe("the official OpenAI SDK (client.responses.create)", () => {
    it("answers a whole response: resp_<job id>, one output_text message, usage with the charge", async () => {
      const openai = openaiFor(client.apiKey);
      const { data, response } = await openai.responses
        .create({ model: MODEL, input: "What does the escrow hold?", instructions: "Answer briefly." })
        .withResponse();

      const jobId = response.headers.get("x-service-job-id")!;
      expect(jobId).toMatch(JOB_ID_PATTERN);
      expect(data.id).toBe(`resp_${jobId}`);
      expect(data.object).toBe("response");
      expect(data.status).toBe("completed");
      expect(data.model).toBe(MODEL);
      expect(data.instructions).toBe("Answer briefly.");
      expect(Math.abs(data.created_at - Date.now() / 1000)).toBeLessThan(60);
      expect(data.output).toHaveLength(1);
      const message = data.output[0]!;
      expect(message).toMatchObject({ type: "message", role: "assistant", status: "completed", id: `msg_${jobId}` });
      expect(data.output_text.length).toBeGreaterThan(0);
      const usage = data.usage as unknown as ChargedUsage;
      expect(usage.input_tokens).toBeGreaterThan(0);
      expect(usage.output_tokens).toBeGreaterThan(0);
      expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);

      expect(response.headers.get("x-service-tx-hash")).toBe(usage.service.escrow_tx);
      expect(response.headers.get("x-service-worker")?.toLowerCase()).toBe(usage.service.worker_address.toLowerCase());
      expect(response.headers.get("x-service-settlement-tx")).toMatch(TX_HASH);
      expect(Number(response.headers.get("x-service-credits-remaining"))).toBe(usage.service.credits_remaining);
      await expectChargeMatchesJob(client.apiKey, jobId, usage);
    });

    it("streams the Responses event sequence, numbered, with the charge in response.completed", async () => {
      const openai = openaiFor(client.apiKey);
      const { data: stream, response } = await openai.responses
        .create({
          model: MODEL,
          input: [{ role: "user", content: [{ type: "input_text", text: "Stream it." }] }],
          stream: true,
        })
        .withResponse();
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event as unknown as ResponseStreamEvent);

      expect(foldedTypes(events.map((event) => event.type))).toEqual(EVENT_ORDER);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []));
      const done = events.find((event) => event.type === "response.output_text.done");
      expect(done?.type === "response.output_text.done" && done.text).toBe(deltas.join(""));
      const completed = events.at(-1)!;
      if (completed.type !== "response.completed") throw new Error("expected response.completed last");
      const jobId = response.headers.get("x-service-job-id")!;
      expect(completed.response.id).toBe(`resp_${jobId}`);
      expect(completed.response.output[0]!.content[0]!.text).toBe(deltas.join(""));
      await expectChargeMatchesJob(client.apiKey, jobId, completed.response.usage!);
    });

    it("responses.stream() accumulates the events into the final response with its charge", async () => {
      const openai = openaiFor(client.apiKey);
      const stream = openai.responses.stream({ model: MODEL, input: "Accumulate." });
      let text = "";
      stream.on("response.output_text.delta", (event) => (text += event.delta));
      const final = await stream.finalResponse();
      expect(final.status).toBe("completed");
      // `output_text` is computed by `responses.create` only; the stream helper returns the message as sent.
      const message = final.output[0];
      expect(message?.type === "message" && message.content[0]?.type === "output_text" && message.content[0].text).toBe(
        text,
      );
      expect(text.length).toBeGreaterThan(0);
      const usage = final.usage as unknown as ChargedUsage;
      expect(final.id).toBe(`resp_${usage.service.job_id}`);
      await expectChargeMatchesJob(client.apiKey, usage.service.job_id, usage);
    });

    it("ends a stream with response.incomplete when max_output_tokens cuts the answer", async () => {
      const openai = openaiFor(client.apiKey);
      const stream = await openai.responses.create({
        model: MODEL,
        input: "Tell me a long story.",
        max_output_tokens: 3,
        stream: true,
      });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event as unknown as ResponseStreamEvent);
      const last = events.at(-1)!;
      expect(last.type).toBe("response.incomplete");
      if (last.type !== "response.incomplete") return;
      expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
      expect(last.response.usage!.output_tokens).toBe(3);
    });
  });

  it("a stream carries the x-service-* headers, event: lines, no [DONE], and the settlement transaction as trailer", async () => {
    const response = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model: MODEL, input: "Trailers?", stream: true },
    });
    expect(response.status, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(response.headers["x-service-job-id"]).toMatch(JOB_ID_PATTERN);
    expect(response.headers["x-service-tx-hash"]).toMatch(TX_HASH);
    expect(response.headers["x-service-worker"]).toMatch(ADDRESS);
    expect(response.headers["x-service-credits-remaining"]).toMatch(/^\d+$/);
    expect(response.trailers["x-service-settlement-tx"]).toMatch(TX_HASH);
    expect(response.body).not.toContain("[DONE]");
    const events = eventsOf(response.body);
    for (const { event, data } of events) expect(event).toBe(data.type);
  });

  it("the OpenAPI document describes the real answers: a whole response, every streamed event, a refusal", async () => {
    const validator = new ResponseValidator();
    const check = (response: Awaited<ReturnType<typeof rawRequest>>) => {
      const contentType = response.headers["content-type"];
      const body = contentType?.startsWith("application/json") ? response.json() : response.body;
      const problems = validator.check({
        method: "POST",
        path: "/v1/responses",
        status: response.status,
        contentType,
        body,
      });
      expect(problems, response.body.slice(0, 400)).toEqual([]);
    };
    const whole = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model: MODEL, input: "Describe yourself.", max_output_tokens: 8 },
    });
    expect(whole.status, whole.body).toBe(200);
    check(whole);
    const streamed = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model: MODEL, input: "Describe yourself.", stream: true },
    });
    check(streamed);
    const event = validator.schema("ResponseStreamEvent");
    for (const { data } of eventsOf(streamed.body)) expect(event(data), JSON.stringify(event.errors)).toBe(true);
    const refused = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model: MODEL, input: "hi", tools: [], tool_choice: "required" },
    });
    expect(refused.status).toBe(400);
    check(refused);
  });

  it("an Idempotency-Key retry of a stream replays the same response as Responses events, once charged", async () => {
    const headers = { "idempotency-key": `responses-${Date.now()}` };
    const body = { model: MODEL, input: "Once only.", stream: true };
    const first = await rawRequest("POST", "/v1/responses", { apiKey: client.apiKey, headers, body });
    expect(first.status, first.body).toBe(200);
    const again = await rawRequest("POST", "/v1/responses", { apiKey: client.apiKey, headers, body });
    expect(again.status, again.body).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["x-service-job-id"]).toBe(first.headers["x-service-job-id"]);
    const completedOf = (raw: string) => eventsOf(raw).at(-1)!.data;
    const replayed = eventsOf(again.body).map(({ data }) => data);
    expect(foldedTypes(replayed.map((event) => event.type))).toEqual(EVENT_ORDER);
    const [original, replay] = [completedOf(first.body), completedOf(again.body)];
    if (original.type !== "response.completed" || replay.type !== "response.completed")
      throw new Error("not completed");
    expect(replay.response.output).toEqual(original.response.output);
    expect(replay.response.usage!.service.job_id).toBe(original.response.usage!.service.job_id);
    const other = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      headers,
      body: { model: MODEL, messages: [{ role: "user", content: "Once only." }], stream: true },
    });
    expectErrorBody(other, 409, "idempotency_key_reused");
  });

  describe("the AI SDK's openai() provider at its default (the Responses API)", () => {
    const provider = () => createOpenAI({ baseURL: `${stackInfo().apiUrl}/v1`, apiKey: client.apiKey });

    it("generateText: the text, the token usage, and the charge in usage.raw", async () => {
      const result = await generateText({ model: provider()(MODEL), prompt: "Say hello.", maxRetries: 0 });
      expect(result.text.length).toBeGreaterThan(0);
      expect(result.finishReason).toBe("stop");
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      expect(result.usage.outputTokens).toBeGreaterThan(0);
      // The provider's raw usage is passed through whole: the charge rides in it as on chat completions.
      const raw = result.usage.raw as unknown as ChargedUsage;
      expect(raw.output_tokens).toBe(result.usage.outputTokens);
      expect(result.response.id).toBe(`resp_${raw.service.job_id}`);
      await expectChargeMatchesJob(client.apiKey, raw.service.job_id, raw);
    });

    it("streamText with a system message: the streamed text, its usage and the charge in usage.raw", async () => {
      const result = streamText({
        model: provider()(MODEL),
        system: "Answer briefly.",
        prompt: "Say hello.",
        maxRetries: 0,
      });
      let text = "";
      for await (const delta of result.textStream) text += delta;
      expect(text.length).toBeGreaterThan(0);
      expect(text).toBe(await result.text);
      expect(await result.finishReason).toBe("stop");
      const usage = await result.usage;
      expect(usage.inputTokens).toBeGreaterThan(0);
      expect(usage.outputTokens).toBeGreaterThan(0);
      const metadata = (await result.providerMetadata) as { openai?: { responseId?: string } } | undefined;
      const raw = usage.raw as unknown as ChargedUsage;
      expect(metadata?.openai?.responseId).toBe(`resp_${raw.service.job_id}`);
      await expectChargeMatchesJob(client.apiKey, raw.service.job_id, raw);
    });
  });

  describe("the response's job", () => {
    it("is a job resource with the response's charge, tokens and the output text's sha256 as proof", async () => {
      const response = await rawRequest("POST", "/v1/responses", {
        apiKey: client.apiKey,
        body: { model: MODEL, input: "Which job am I?" },
      });
      expect(response.status, response.body).toBe(200);
      const body = response.json<ResponseObject>();
      const jobId = String(response.headers["x-service-job-id"]);
      const job = await expectChargeMatchesJob(client.apiKey, jobId, body.usage!);
      expect(job.id).toBe(jobId);
      expect(job.model).toBe(MODEL);
      expect(job.on_chain!.proof_hash).toBe(sha256Of(body.output[0]!.content[0]!.text));
    });

    it("can be disputed with the sha256 of the output text: equal to the worker's proof, no dispute opened", async () => {
      const response = await rawRequest("POST", "/v1/responses", {
        apiKey: client.apiKey,
        body: { model: MODEL, input: "Is this what you sent?" },
      });
      expect(response.status, response.body).toBe(200);
      const body = response.json<ResponseObject>();
      const jobId = String(response.headers["x-service-job-id"]);
      await waitForJobStatus(client.apiKey, jobId, "settled");
      const received = sha256Of(body.output[0]!.content[0]!.text);
      const answer = await rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
        apiKey: client.apiKey,
        body: { received_output_hash: received },
      });
      expect(answer.status, answer.body).toBe(200);
      expect(answer.json<DisputeResult>()).toMatchObject({
        job_id: jobId,
        dispute_opened: false,
        your_hash: received,
        worker_hash: received,
      });
    });

    it("can be disputed with a different hash: the dispute opens on chain", async () => {
      const response = await rawRequest("POST", "/v1/responses", {
        apiKey: client.apiKey,
        body: { model: MODEL, input: "Was it altered?" },
      });
      expect(response.status, response.body).toBe(200);
      const text = response.json<ResponseObject>().output[0]!.content[0]!.text;
      const jobId = String(response.headers["x-service-job-id"]);
      await waitForJobStatus(client.apiKey, jobId, "settled");
      const answer = await rawRequest("POST", `/v1/jobs/${jobId}/dispute`, {
        apiKey: client.apiKey,
        body: { received_output_hash: sha256Of(`${text} (altered in transit)`) },
      });
      expect(answer.status, answer.body).toBe(200);
      const result = answer.json<DisputeResult>();
      expect(result.dispute_opened).toBe(true);
      expect(result.worker_hash).toBe(sha256Of(text));
      if (result.dispute_opened) expect(result.dispute_tx).toMatch(TX_HASH);
    });
  });

  it("locks the escrow on chain before routing: the lock is mined while the job waits at its worker", async () => {
    // A worker of the test's own, slow to its first token, on a model only it serves: the job can be seen at it.
    const model = await claimCatalogModel("responses-escrow");
    await startExtraWorker({ models: [model], ttftMs: 3_000 }, client.apiKey);
    const answer = rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model, input: "Lock first.", stream: true },
    });
    let jobId = "";
    await waitFor(
      "the job at its worker",
      async () => {
        const list = await rawRequest("GET", `/v1/jobs?model=${encodeURIComponent(model)}`, { apiKey: client.apiKey });
        const job = list.json<{ data: Job[] }>().data[0];
        if (job?.status !== "processing") return false;
        jobId = job.id;
        return true;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    // The worker acknowledged (processing) and has not answered yet; the lock is already a mined JobOpened.
    const held = await getJob(client.apiKey, jobId);
    const escrowTx = held.headers["x-service-tx-hash"] as `0x${string}`;
    expect(escrowTx).toMatch(TX_HASH);
    const receipt = await publicClient().waitForTransactionReceipt({ hash: escrowTx });
    const opened = await publicClient().getContractEvents({
      address: contracts().creditEscrow,
      abi: creditEscrowAbi,
      eventName: "JobOpened",
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
      args: { jobId: jobIdToBytes32(jobId) },
    });
    expect(opened).toHaveLength(1);
    expect((await accountOf(client.wallet)).locked).toBeGreaterThan(0n);
    expect((await getJob(client.apiKey, jobId)).json<Job>().status).toBe("processing");

    const done = await answer;
    expect(done.status, done.body).toBe(200);
    expect(done.headers["x-service-job-id"]).toBe(jobId);
    expect(done.headers["x-service-tx-hash"]).toBe(escrowTx);
  });

  it("error: a worker failing mid-stream ends the stream with response.failed holding job_failed, nothing charged", async () => {
    const model = await claimCatalogModel("responses-fail");
    await startExtraWorker({ models: [model], fault: "fail_after_first_token" }, client.apiKey);
    const response = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: { model, input: "Fail halfway.", stream: true },
    });
    expect(response.status).toBe(200);
    const events = eventsOf(response.body).map(({ data }) => data);
    expect(events.map((event) => event.type).slice(0, 5)).toEqual(EVENT_ORDER.slice(0, 5));
    const last = events.at(-1)!;
    if (last.type !== "response.failed") throw new Error(`expected response.failed, got ${last.type}`);
    expect(last.response.status).toBe("failed");
    expect(last.response.error).toMatchObject({ code: "job_failed", type: "api_error" });
    expect(last.response.error!.docs).toMatch(/\/errors#job_failed$/);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const job = await waitForJobStatus(client.apiKey, String(response.headers["x-service-job-id"]), "failed");
    expect(job.credits_charged).toBe(0);
  });

  it("error: an input over the context window is context_length_exceeded naming input", async () => {
    const response = await rawRequest("POST", "/v1/responses", {
      apiKey: client.apiKey,
      body: {
        model: "qwen3-1.7b",
        instructions: "Read this.",
        input: [{ role: "user", content: "word ".repeat(40_000) }],
      },
    });
    expectErrorBody(response, 400, "context_length_exceeded", { param: "input" });
  });

  describe("what the service does not offer", () => {
    it.each([
      ["tools", { tools: [{ type: "function", name: "f", parameters: {} }] }, "tools"],
      ["tool_choice", { tool_choice: "auto" }, "tool_choice"],
      ["previous_response_id", { previous_response_id: "resp_abc" }, "previous_response_id"],
      ["store: true", { store: true }, "store"],
      ["background", { background: true }, "background"],
      ["conversation", { conversation: "conv_abc" }, "conversation"],
      ["reasoning", { reasoning: { effort: "low" } }, "reasoning"],
      ["include", { include: ["message.output_text.logprobs"] }, "include"],
      [
        "text.format json_schema",
        { text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } } },
        "text.format",
      ],
      [
        "an image input",
        { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }] },
        "input.0.content.0",
      ],
      [
        "a file input",
        { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] },
        "input.0.content.0",
      ],
      ["a tool result item", { input: [{ type: "function_call_output", call_id: "c", output: "1" }] }, "input.0"],
      ["an unknown field", { frobnicate: 1 }, "frobnicate"],
      ["a chat field", { messages: [{ role: "user", content: "hi" }] }, "messages"],
    ])("error: %s is refused with invalid_request naming it", async (_name, extra, param) => {
      const response = await rawRequest("POST", "/v1/responses", {
        apiKey: client.apiKey,
        body: { model: MODEL, input: "hi", ...extra },
      });
      const error = expectErrorBody(response, 400, "invalid_request");
      expect(error.param?.startsWith(param), `${error.param} names ${param}`).toBe(true);
      expect(response.headers["x-service-job-id"]).toBeUndefined();
    });

    it("error: an unknown model is model_not_found naming model", async () => {
      const response = await rawRequest("POST", "/v1/responses", {
        apiKey: client.apiKey,
        body: { model: "no-such-model", input: "hi" },
      });
      expectErrorBody(response, 400, "model_not_found", { param: "model" });
    });

    it("error: a refusal comes as the official SDK's error, nothing charged", async () => {
      const before = await accountOf(client.wallet);
      const openai = openaiFor(client.apiKey);
      const refused = await openai.responses
        .create({ model: MODEL, input: "hi", previous_response_id: "resp_abc" })
        .then(() => undefined)
        .catch((error: unknown) => error as { status: number; code: string; param: string });
      expect(refused).toMatchObject({ status: 400, code: "invalid_request", param: "previous_response_id" });
      expect((await accountOf(client.wallet)).available).toBe(before.available);
    });
  });
});
