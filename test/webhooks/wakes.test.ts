import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { IndexReader } from "../../api/webhooks/chainEventFeed.js";
import type { Dispatcher } from "../../api/webhooks/startDispatcher.js";
import { waitFor } from "../../scripts/stack/waitFor.js";
import { insertProcessingJob } from "./support/processingJob.js";
import { webhookFixture, type WebhookFixture } from "./support/webhookFixture.js";

// What each wake of the dispatcher reads (issue 26): the gateway's wake after a job's acknowledgement ingests
// job.processing from its own table; only the index's notifications (and a full wake) read the index.

const stack = inject("webhookStack");
const MODEL = "llama-3.1-8b-instruct";
const WORKER = `0x${"11".repeat(20)}` as const;
let fixture: WebhookFixture;
let dispatcher: Dispatcher;
let indexReads = 0;

/** Counts the dispatcher's reads of the index's chain events. */
function counted(index: IndexReader): IndexReader {
  return {
    chainEventsAfter(position, limit) {
      indexReads += 1;
      return index.chainEventsAfter(position, limit);
    },
    modelIds: (modelKeys) => index.modelIds(modelKeys),
  };
}

beforeAll(async () => {
  fixture = await webhookFixture(stack, {
    name: "wakes",
    walletIndex: 36,
    receiverPort: 8786,
    events: ["job.processing"],
  });
  // Neither loop polls during the test: only wakes run rounds.
  dispatcher = fixture.startDispatcher({ ingestIntervalMs: 60_000, ingestFallbackMs: 60_000, wrapIndex: counted });
  await waitFor("the dispatcher's first read of the index", async () => indexReads > 0);
  // The rounds of its start (and of its LISTEN connection's) are over.
  await new Promise((resolve) => setTimeout(resolve, 500));
});

afterAll(async () => {
  await fixture?.close();
});

describe("dispatcher wakes", () => {
  it("a job's acknowledgement delivers its job.processing without reading the index", async () => {
    const before = indexReads;
    const jobId = await insertProcessingJob(fixture.pool, {
      wallet: fixture.wallet.address,
      worker: WORKER,
      model: MODEL,
      n: 10_001,
    });
    dispatcher.jobProcessing();
    await waitFor(`job.processing of ${jobId}`, async () =>
      fixture.receiver.requests.some((request) => request.rawBody.includes(jobId)),
    );
    expect(indexReads).toBe(before);
  });

  it("a full wake reads the index as well", async () => {
    const before = indexReads;
    dispatcher.wake();
    await waitFor("an index read after the wake", async () => indexReads > before);
  });
});
