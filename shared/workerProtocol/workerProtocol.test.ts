import { describe, expect, it } from "vitest";
import * as gatewaySide from "../../api/workerPool/workerProtocol.js";
import {
  cancelPayloadSchema,
  healthSchema,
  jobPayloadSchema,
  workerEventSchema,
  type WorkerEventLine,
  type WorkerJobPayload,
} from "./index.js";

const payload: WorkerJobPayload = {
  job_id: "job_01JBZ8Q6W5X4Y3Z2A1B0C9D8E7",
  job_id_bytes32: `0x${"ab".repeat(32)}`,
  model: "qwen3-1.7b",
  messages: [{ role: "user", content: "Say something." }],
  max_tokens: 16,
  escrow: { chain_id: 31337, address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" },
};

describe("the gateway ↔ worker protocol", () => {
  it("is one module: the gateway's protocol is the worker's, schema for schema", () => {
    expect(gatewaySide.jobPayloadSchema).toBe(jobPayloadSchema);
    expect(gatewaySide.cancelPayloadSchema).toBe(cancelPayloadSchema);
    expect(gatewaySide.workerEventSchema).toBe(workerEventSchema);
    expect(gatewaySide.healthSchema).toBe(healthSchema);
  });

  it("takes null in an optional sampling field of the job as not set", () => {
    const parsed = jobPayloadSchema.parse({ ...payload, temperature: null, stop: null, seed: null });
    expect(parsed.temperature ?? undefined).toBeUndefined();
    expect(parsed.stop ?? undefined).toBeUndefined();
  });

  it("reads a job that names no delivery as streamed, a token line each (what every earlier gateway sends)", () => {
    expect(jobPayloadSchema.parse(payload).delivery).toBe("stream");
    expect(jobPayloadSchema.parse({ ...payload, delivery: "whole" }).delivery).toBe("whole");
  });

  it("refuses a gathered tokens line with no token in it", () => {
    expect(workerEventSchema.safeParse({ type: "tokens", texts: [] }).success).toBe(false);
    expect(workerEventSchema.parse({ type: "tokens", texts: ["a", "b"] })).toEqual({
      type: "tokens",
      texts: ["a", "b"],
    });
  });

  it("refuses a job whose id is not job_ followed by a ULID", () => {
    expect(jobPayloadSchema.safeParse({ ...payload, job_id: "job_123" }).success).toBe(false);
  });

  it("reads every event kind the worker writes, and an error without a message as an empty message", () => {
    const written: WorkerEventLine[] = [
      { type: "ack", worker: "0x5FbDB2315678afecb367f032d93F642f64180aa3", backend: "sim" },
      { type: "token", text: "Hi" },
      {
        type: "done",
        finish_reason: "stop",
        usage: { prompt_tokens: 3, completion_tokens: 1 },
        receipt: {
          jobId: payload.job_id_bytes32 as `0x${string}`,
          outputHash: `0x${"cd".repeat(32)}`,
          promptTokens: 3,
          completionTokens: 1,
          finalTokenAt: 1_700_000_000,
        },
        signature: `0x${"ef".repeat(65)}`,
      },
      { type: "error", code: "backend_error" },
    ];
    const read = written.map((event) => workerEventSchema.parse(JSON.parse(JSON.stringify(event))));
    expect(read.map((event) => event.type)).toEqual(["ack", "token", "done", "error"]);
    expect(read[3]).toEqual({ type: "error", code: "backend_error", message: "" });
  });

  it("refuses an event with a hex field that is not hex", () => {
    expect(workerEventSchema.safeParse({ type: "ack", worker: "0xnothex", backend: "sim" }).success).toBe(false);
  });
});
