import { ulid } from "ulid";
import type { Hex } from "viem";
import { jobIdToBytes32 } from "@credit-metered/client";
import { workerEventSchema, type WorkerEvent } from "../../shared/workerProtocol/index.js";
import { TEST_GATEWAY_TOKEN } from "./startWorkerProcess.js";

/** The escrow the receipts in tests are signed for (Hardhat's first deployment address on chain 31337). */
export const TEST_ESCROW = { chain_id: 31337, address: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } as const;

/** A line of the worker's answer, as the gateway reads it (each line is checked against the protocol). */
export type JobLine = WorkerEvent;

export type TimedLine = { line: JobLine; at: number };

export function newJobId(): { job_id: string; job_id_bytes32: Hex } {
  const job_id = `job_${ulid()}`;
  return { job_id, job_id_bytes32: jobIdToBytes32(job_id) };
}

export function jobPayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...newJobId(),
    model: "qwen3-1.7b",
    messages: [{ role: "user", content: "Say something." }],
    max_tokens: 256,
    escrow: TEST_ESCROW,
    ...overrides,
  };
}

export function authHeaders(token: string = TEST_GATEWAY_TOKEN): Record<string, string> {
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
}

/** Reads an NDJSON body line by line as it arrives, stamping each line with its arrival time. */
export async function* readJobLines(body: ReadableStream<Uint8Array>): AsyncGenerator<TimedLine> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const text = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        yield { line: workerEventSchema.parse(JSON.parse(text)), at: performance.now() };
        newline = buffered.indexOf("\n");
      }
    }
    if (buffered.trim() !== "") throw new Error(`unterminated NDJSON line: ${buffered}`);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Posts a job and collects every line until the worker ends the stream. */
export async function runJob(
  url: string,
  payload: Record<string, unknown>,
): Promise<{ status: number; contentType: string | null; lines: TimedLine[] }> {
  const response = await fetch(`${url}/v1/jobs`, {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify(payload),
  });
  const lines: TimedLine[] = [];
  if (response.ok && response.body) for await (const line of readJobLines(response.body)) lines.push(line);
  return { status: response.status, contentType: response.headers.get("content-type"), lines };
}

export function tokenTexts(lines: TimedLine[]): string[] {
  return lines.flatMap(({ line }) => (line.type === "token" ? [line.text] : line.type === "tokens" ? line.texts : []));
}

export function doneLine(lines: TimedLine[]): Extract<JobLine, { type: "done" }> {
  const last = lines.at(-1)?.line;
  if (last?.type !== "done") throw new Error(`expected a done line last, got ${JSON.stringify(last)}`);
  return last;
}
