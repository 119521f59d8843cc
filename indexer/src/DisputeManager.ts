import { ponder } from "ponder:registry";
import { recordChainEvent } from "./write/chainEvent.js";
import { changeDispute, getDispute, upsertDispute } from "./write/dispute.js";
import { jobIdFromKey } from "./write/ids.js";
import { disputeOutcomeLabel } from "./write/labels.js";

// Disputes. The job's own status moves on the escrow's JobDisputed / JobDisputeClosed.

ponder.on("DisputeManager:DisputeOpened", async ({ event, context }) => {
  const { jobId: jobKey, wallet, worker, clientHash, proofHash, deadline } = event.args;
  const jobId = jobIdFromKey(jobKey);
  await upsertDispute(context.db, {
    jobKey,
    jobId,
    wallet,
    worker,
    clientHash,
    proofHash,
    openedTx: event.transaction.hash,
    openedAt: event.block.timestamp,
    deadline,
    outcome: "pending",
    creditsRestored: null,
    slashAmount: null,
    resolutionTx: null,
    resolvedAt: null,
  });
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "DisputeOpened",
    wallet,
    jobKey,
    data: {
      jobId,
      jobKey,
      wallet,
      worker,
      clientHash,
      proofHash,
      deadline,
      disputeTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});

ponder.on("DisputeManager:DisputeResolved", async ({ event, context }) => {
  const { jobId: jobKey, outcome, creditsRestored, slashAmount, resolver } = event.args;
  const label = disputeOutcomeLabel(outcome);
  const opened = await getDispute(context.db, jobKey);
  await changeDispute(context.db, jobKey, {
    outcome: label,
    creditsRestored,
    slashAmount,
    resolutionTx: event.transaction.hash,
    resolvedAt: event.block.timestamp,
  });
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "DisputeResolved",
    wallet: opened.wallet,
    jobKey,
    data: {
      jobId: opened.jobId,
      jobKey,
      wallet: opened.wallet,
      worker: opened.worker,
      outcome: label,
      creditsRestored,
      slashAmount,
      resolver,
      resolutionTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});
