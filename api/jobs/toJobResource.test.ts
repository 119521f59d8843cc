import { describe, expect, it } from "vitest";
import type { IndexedJob } from "../readModel/indexReader.js";
import type { GatewayJobRow } from "./jobStore.js";
import { jobStateOf, toJobResource } from "./toJobResource.js";

const escrow = "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707" as const;
const jobId = "job_01M7Y7NFJYNZKJFBBEECMHSWSG";

function indexed(overrides: Partial<IndexedJob> = {}): IndexedJob {
  return {
    jobKey: "0x0000000000000000000000000000000001",
    id: jobId,
    wallet: "0xfabb0ac9d68b0b445fb7357272ff202c5651694a",
    keyHash: "0x01",
    modelKey: "0x02",
    modelId: "qwen3-1.7b",
    tier: "lite",
    status: "pending",
    creditsLocked: 3n,
    creditsCharged: null,
    creditsRefunded: null,
    workerAmount: null,
    feeAmount: null,
    worker: null,
    promptTokens: null,
    completionTokens: null,
    outputHash: null,
    finalTokenAt: null,
    deadline: 1_700_000_120n,
    createdAt: 1_700_000_000n,
    completedAt: null,
    balanceAfter: null,
    escrowTx: "0xe5c",
    escrowBlock: 10n,
    settlementTx: null,
    settlementBlock: null,
    refundTx: null,
    failTx: null,
    disputeTx: null,
    ...overrides,
  } as IndexedJob;
}

function local(overrides: Partial<GatewayJobRow> = {}): GatewayJobRow {
  return {
    final: false,
    closed_before_lock: false,
    job_id: jobId,
    job_key: "0x01",
    wallet: "0xfabb",
    key_hash: "0x01",
    model: "qwen3-1.7b",
    tier: "lite",
    status: "pending",
    stream: false,
    max_tokens: 16,
    credits_locked: "3",
    prompt_tokens: 9,
    completion_tokens: null,
    credits_charged: null,
    worker: null,
    escrow_tx: "0xe5c",
    deadline: null,
    processing_at: null,
    receipt: null,
    signature: null,
    output_hash: null,
    final_token_at: null,
    settlement_tx: null,
    settlement_block: null,
    fail_tx: null,
    refund_tx: null,
    timed_out: false,
    error: null,
    created_at: new Date(1_700_000_000_000),
    updated_at: new Date(1_700_000_000_000),
    completed_at: null,
    ...overrides,
  };
}

const settled = indexed({
  status: "settled",
  creditsCharged: 2n,
  worker: "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
  promptTokens: 9,
  completionTokens: 20,
  outputHash: "0xa5443069bb42ba11fddd5a9651bdd8799a36f93aa4e5b57a236a4b5dae57094a",
  finalTokenAt: 1_700_000_001n,
  completedAt: 1_700_000_002n,
  settlementTx: "0x5e7",
  settlementBlock: 42n,
});

describe("jobStateOf", () => {
  it("reports processing while the chain says pending and a worker acknowledged", () => {
    expect(jobStateOf(indexed(), local({ status: "processing" }))).toBe("processing");
  });

  it("reports settling until the index has the settlement, even once it was mined", () => {
    expect(jobStateOf(indexed(), local({ status: "settled" }))).toBe("settling");
  });

  it("reports what the chain decided once it is indexed", () => {
    expect(jobStateOf(settled, local({ status: "settling" }))).toBe("settled");
  });

  it("reports a job the gateway failed for its own (shorter) timeout as refunded", () => {
    expect(jobStateOf(indexed({ status: "failed" }), local({ status: "refunded", timed_out: true }))).toBe("refunded");
  });

  it("reads its own dispute at once: disputed while the index still says settled (issue 11, item 9)", () => {
    expect(jobStateOf(settled, local({ status: "disputed" }))).toBe("disputed");
  });

  it("follows the index once it has the dispute: a rejected dispute shows settled again", () => {
    expect(jobStateOf({ ...settled, disputeTx: "0xd15" }, local({ status: "disputed" }))).toBe("settled");
    expect(jobStateOf({ ...settled, status: "disputed", disputeTx: "0xd15" }, local({ status: "disputed" }))).toBe(
      "disputed",
    );
  });

  it("reports pending for a job only the gateway knows yet", () => {
    expect(jobStateOf(undefined, local())).toBe("pending");
  });
});

describe("toJobResource", () => {
  it("shows every Job field of a settled job with its on_chain proof", () => {
    expect(toJobResource(settled, local({ status: "settled" }), escrow)).toEqual({
      id: jobId,
      object: "job",
      status: "settled",
      model: "qwen3-1.7b",
      tier: "lite",
      credits_charged: 2,
      usdg_value: 0.02,
      worker_address: "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
      created_at: "2023-11-14T22:13:20.000Z",
      completed_at: "2023-11-14T22:13:22.000Z",
      usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 },
      on_chain: {
        escrow_tx: "0xe5c",
        settlement_tx: "0x5e7",
        escrow_address: escrow,
        block_number: 42,
        proof_hash: "sha256:a5443069bb42ba11fddd5a9651bdd8799a36f93aa4e5b57a236a4b5dae57094a",
      },
    });
  });

  it("shows no on_chain object before settlement", () => {
    expect(toJobResource(indexed(), local({ status: "processing" }), escrow).on_chain).toBeUndefined();
  });

  it("charges nothing and shows zero usage for a job still pending", () => {
    const resource = toJobResource(undefined, local(), escrow);
    expect(resource).toMatchObject({ credits_charged: 0, usdg_value: 0, completed_at: null, worker_address: null });
  });
});
