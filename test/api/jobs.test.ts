import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody, getJob, rawRequest, waitForJobStatus, type Job } from "../support/api.js";
import { contracts } from "../support/chain.js";
import { createClientWallet, type ClientWallet } from "../support/wallets.js";

const LITE_A = "qwen3-1.7b";
const LITE_B = "llama-3.2-3b-instruct";

type JobList = { object: string; data: Job[]; has_more: boolean; next_cursor: string | null };

describe("GET /v1/jobs and /v1/jobs/{job_id}", () => {
  let client: ClientWallet;
  /** Job ids in creation order, and the text each returned. */
  const created: { id: string; model: string; text: string; worker: string }[] = [];

  beforeAll(async () => {
    client = await createClientWallet({ usdg: 2n });
    for (const model of [LITE_A, LITE_B, LITE_A, LITE_B, LITE_A]) {
      const response = await rawRequest("POST", "/v1/chat/completions", {
        apiKey: client.apiKey,
        body: { model, messages: [{ role: "user", content: `job ${created.length}` }] },
      });
      expect(response.status, response.body).toBe(200);
      created.push({
        id: String(response.headers["x-service-job-id"]),
        model,
        text: response.json<{ choices: { message: { content: string } }[] }>().choices[0]!.message.content,
        worker: String(response.headers["x-service-worker"]),
      });
    }
    for (const job of created) await waitForJobStatus(client.apiKey, job.id, "settled");
  });

  function list(query = "") {
    return rawRequest("GET", `/v1/jobs${query}`, { apiKey: client.apiKey });
  }

  it("lists the key's jobs newest first", async () => {
    const response = await list();
    expect(response.status).toBe(200);
    const body = response.json<JobList>();
    expect(body.object).toBe("list");
    expect(body.data.map((job) => job.id)).toEqual(created.map((job) => job.id).reverse());
    expect(body.has_more).toBe(false);
  });

  it("pages with limit, has_more and next_cursor, and continues with before", async () => {
    const first = (await list("?limit=2")).json<JobList>();
    expect(first.data.map((job) => job.id)).toEqual([created[4]!.id, created[3]!.id]);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(created[3]!.id);

    const second = (await list(`?limit=2&before=${first.next_cursor}`)).json<JobList>();
    expect(second.data.map((job) => job.id)).toEqual([created[2]!.id, created[1]!.id]);
    expect(second.has_more).toBe(true);

    const last = (await list(`?limit=2&before=${second.next_cursor}`)).json<JobList>();
    expect(last.data.map((job) => job.id)).toEqual([created[0]!.id]);
    expect(last.has_more).toBe(false);
  });

  it("lists jobs created after a cursor with after", async () => {
    const body = (await list(`?after=${created[2]!.id}`)).json<JobList>();
    expect(body.data.map((job) => job.id).sort()).toEqual([created[3]!.id, created[4]!.id].sort());
  });

  it("filters by model and by status", async () => {
    const byModel = (await list(`?model=${LITE_B}`)).json<JobList>();
    expect(byModel.data.map((job) => job.id)).toEqual([created[3]!.id, created[1]!.id]);
    const settled = (await list("?status=settled")).json<JobList>();
    expect(settled.data).toHaveLength(5);
    const refunded = (await list("?status=refunded")).json<JobList>();
    expect(refunded.data).toEqual([]);
  });

  it("error: invalid_request for a limit above 100 or an unknown status", async () => {
    expectErrorBody(await list("?limit=101"), 400, "invalid_request", { param: "limit" });
    expectErrorBody(await list("?status=finished"), 400, "invalid_request", { param: "status" });
  });

  it("returns a settled job with charge, usage, worker and its on_chain proof", async () => {
    const expected = created[1]!;
    const response = await getJob(client.apiKey, expected.id);
    expect(response.status).toBe(200);
    const job = response.json<Job>();
    expect(job).toMatchObject({ id: expected.id, object: "job", status: "settled", model: LITE_B, tier: "lite" });
    expect(job.credits_charged).toBe(2);
    expect(job.usdg_value).toBe(0.02);
    expect(job.worker_address?.toLowerCase()).toBe(expected.worker.toLowerCase());
    expect(job.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Date.parse(job.completed_at!)).toBeGreaterThanOrEqual(Date.parse(job.created_at) - 1_000);
    expect(job.usage.total_tokens).toBe(job.usage.prompt_tokens + job.usage.completion_tokens);
    const sha = createHash("sha256").update(expected.text, "utf8").digest("hex");
    expect(job.on_chain).toEqual({
      escrow_tx: expect.stringMatching(/^0x[0-9a-f]{64}$/) as string,
      settlement_tx: expect.stringMatching(/^0x[0-9a-f]{64}$/) as string,
      escrow_address: expect.any(String) as string,
      block_number: expect.any(Number) as number,
      proof_hash: `sha256:${sha}`,
    });
    expect(job.on_chain!.escrow_address.toLowerCase()).toBe(contracts().creditEscrow.toLowerCase());
  });

  it("shows no on_chain object before the job has settled", async () => {
    const response = await rawRequest("POST", "/v1/chat/completions", {
      apiKey: client.apiKey,
      body: { model: LITE_A, messages: [{ role: "user", content: "in flight" }], stream: true },
    });
    const jobId = String(response.headers["x-service-job-id"]);
    // Poll from the moment the stream has closed until settlement; every non-settled view lacks on_chain.
    for (;;) {
      const job = (await getJob(client.apiKey, jobId)).json<Job>();
      if (job.status === "settled") {
        expect(job.on_chain?.settlement_tx).toMatch(/^0x[0-9a-f]{64}$/);
        break;
      }
      expect(["pending", "processing", "settling"]).toContain(job.status);
      expect(job.on_chain).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it("error: 404 for another key's job, in the list and by id", async () => {
    const other = await createClientWallet({ usdg: 0n });
    const byId = await getJob(other.apiKey, created[0]!.id);
    expectErrorBody(byId, 404, "job_not_found");
    const otherList = (await rawRequest("GET", "/v1/jobs", { apiKey: other.apiKey })).json<JobList>();
    expect(otherList.data).toEqual([]);
  });

  it("error: 404 for a job id that does not exist", async () => {
    expectErrorBody(await getJob(client.apiKey, "job_01ARZ3NDEKTSV4RRFFQ69G5FAV"), 404, "job_not_found");
  });
});
