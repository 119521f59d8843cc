import { newJobId } from "@credit-metered/client";
import { responseObjectSchema, responseStreamEventSchema } from "@credit-metered/client/http";
import { describe, expect, it } from "vitest";
import { usageOf } from "../completions/completionObjects.js";
import { parseResponsesRequest } from "./parseResponsesRequest.js";
import {
  closingEvents,
  deltaEvent,
  openingEvents,
  outputMessage,
  responseObject,
  responseUsageOf,
  type ResponseMeta,
} from "./responseObjects.js";

const JOB = newJobId(1_700_000_000_000);
const request = parseResponsesRequest({ model: "m", input: "hi", instructions: "Be brief.", max_output_tokens: 50 }, 8);
const meta: ResponseMeta = {
  id: `resp_${JOB}`,
  messageId: `msg_${JOB}`,
  createdAt: 1_700_000_000,
  model: "m",
  request,
};
const charge = {
  job_id: JOB,
  credits_charged: 2,
  usdg_value: 0.02,
  credits_remaining: 98,
  escrow_tx: `0x${"a".repeat(64)}`,
  settlement_tx: null,
  worker_address: `0x${"b".repeat(40)}`,
} as const;

describe("responseUsageOf", () => {
  it("renames the token counts and carries the charge as chat completions do", () => {
    expect(responseUsageOf(usageOf(7, 3, charge))).toEqual({
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 10,
      cost: 2,
      service: charge,
    });
  });
});

describe("the stream's events", () => {
  const final = responseObject(meta, {
    status: "completed",
    output: [outputMessage(meta, "completed", "Hello there")],
    usage: responseUsageOf(usageOf(7, 3, charge)),
  });
  const events = [
    ...openingEvents(meta),
    deltaEvent(meta, "Hello"),
    deltaEvent(meta, " there"),
    ...closingEvents(meta, final),
  ];

  it("come in OpenAI's order", () => {
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  it("each match the contract's event schema", () => {
    for (const [index, event] of events.entries())
      expect(responseStreamEventSchema.safeParse({ ...event, sequence_number: index }).success, event.type).toBe(true);
  });

  it("close with the whole text and the charged usage", () => {
    const done = events.find((event) => event.type === "response.output_text.done");
    expect(done).toMatchObject({ text: "Hello there" });
    expect(events.at(-1)).toMatchObject({ response: { status: "completed", usage: { cost: 2 } } });
  });

  it("end with response.incomplete when max_output_tokens cut the answer", () => {
    const cut = responseObject(meta, {
      status: "incomplete",
      output: [outputMessage(meta, "incomplete", "Hel")],
      usage: null,
    });
    const last = closingEvents(meta, cut).at(-1);
    expect(last).toMatchObject({
      type: "response.incomplete",
      response: { incomplete_details: { reason: "max_output_tokens" } },
    });
  });
});

describe("responseObject", () => {
  it("matches the contract and echoes the request", () => {
    const object = responseObject(meta, {
      status: "completed",
      output: [outputMessage(meta, "completed", "x")],
      usage: null,
    });
    expect(responseObjectSchema.parse(object)).toMatchObject({
      id: `resp_${JOB}`,
      object: "response",
      instructions: "Be brief.",
      max_output_tokens: 50,
      store: false,
    });
  });
});
