import { ponder } from "ponder:registry";
import { changeAccount } from "./write/account.js";
import { projectEscrowReturn } from "./write/escrowReturned.js";
import { recordChainEvent } from "./write/chainEvent.js";
import { jobIdFromKey } from "./write/ids.js";
import { changeJob, insertJob } from "./write/job.js";
import { tierLabel } from "./write/labels.js";
import { modelIdOf } from "./write/model.js";

// Credits and jobs. Every balance the events carry (`balanceAfter`) is copied, never recomputed.

ponder.on("CreditEscrow:Deposited", async ({ event, context }) => {
  const { wallet, payer, amount, credits, balanceAfter } = event.args;
  await changeAccount(context.db, wallet, (row) => ({
    creditsAvailable: balanceAfter,
    creditsDeposited: row.creditsDeposited + credits,
    lastTopUpAt: event.block.timestamp,
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "Deposited",
    wallet,
    data: { wallet, payer, amount, credits, balanceAfter },
  });
});

ponder.on("CreditEscrow:Withdrawn", async ({ event, context }) => {
  const { wallet, credits, amount, balanceAfter } = event.args;
  await changeAccount(context.db, wallet, (row) => ({
    creditsAvailable: balanceAfter,
    creditsWithdrawn: row.creditsWithdrawn + credits,
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "Withdrawn",
    wallet,
    data: { wallet, credits, amount, balanceAfter },
  });
});

ponder.on("CreditEscrow:JobOpened", async ({ event, context }) => {
  const { jobId: jobKey, wallet, keyHash, modelKey, tier, creditsLocked, balanceAfter, deadline } = event.args;
  const id = jobIdFromKey(jobKey);
  const modelId = await modelIdOf(context.db, modelKey);
  await insertJob(context.db, {
    jobKey,
    id,
    wallet,
    keyHash,
    modelKey,
    modelId,
    tier: tierLabel(tier),
    status: "pending",
    creditsLocked,
    deadline,
    createdAt: event.block.timestamp,
    balanceAfter,
    escrowTx: event.transaction.hash,
    escrowBlock: event.block.number,
  });
  await changeAccount(context.db, wallet, (row) => ({
    creditsAvailable: balanceAfter,
    creditsLocked: row.creditsLocked + creditsLocked,
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "JobOpened",
    wallet,
    jobKey,
    data: {
      jobId: id,
      jobKey,
      wallet,
      keyHash,
      modelKey,
      modelId,
      tier: tierLabel(tier),
      creditsLocked,
      balanceAfter,
      deadline,
      escrowTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});

ponder.on("CreditEscrow:JobSettled", async ({ event, context }) => {
  const a = event.args;
  const opened = await changeJob(context.db, a.jobId, {
    status: "settled",
    worker: a.worker,
    outputHash: a.outputHash,
    promptTokens: a.promptTokens,
    completionTokens: a.completionTokens,
    finalTokenAt: a.finalTokenAt,
    creditsCharged: a.creditsCharged,
    creditsRefunded: a.creditsRefunded,
    workerAmount: a.workerAmount,
    feeAmount: a.feeAmount,
    balanceAfter: a.balanceAfter,
    completedAt: event.block.timestamp,
    settlementTx: event.transaction.hash,
    settlementBlock: event.block.number,
  });
  await changeAccount(context.db, a.wallet, (row) => ({
    creditsAvailable: a.balanceAfter,
    creditsLocked: row.creditsLocked - opened.creditsLocked,
    creditsCharged: row.creditsCharged + a.creditsCharged,
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "JobSettled",
    wallet: a.wallet,
    jobKey: a.jobId,
    data: {
      jobId: opened.id,
      jobKey: a.jobId,
      wallet: a.wallet,
      worker: a.worker,
      modelId: opened.modelId,
      tier: opened.tier,
      outputHash: a.outputHash,
      promptTokens: a.promptTokens,
      completionTokens: a.completionTokens,
      finalTokenAt: a.finalTokenAt,
      creditsLocked: opened.creditsLocked,
      creditsCharged: a.creditsCharged,
      creditsRefunded: a.creditsRefunded,
      workerAmount: a.workerAmount,
      feeAmount: a.feeAmount,
      balanceAfter: a.balanceAfter,
      settlementTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});

ponder.on("CreditEscrow:JobFailed", async ({ event, context }) => {
  const { jobId: jobKey, wallet, creditsReturned, balanceAfter } = event.args;
  await projectEscrowReturn(context.db, context.chain.id, event, {
    name: "JobFailed",
    status: "failed",
    txColumn: "failTx",
    jobKey,
    wallet,
    credits: creditsReturned,
    balanceAfter,
    data: { creditsReturned },
  });
});

ponder.on("CreditEscrow:JobRefunded", async ({ event, context }) => {
  const { jobId: jobKey, wallet, creditsRefunded, balanceAfter, caller } = event.args;
  await projectEscrowReturn(context.db, context.chain.id, event, {
    name: "JobRefunded",
    status: "refunded",
    txColumn: "refundTx",
    jobKey,
    wallet,
    credits: creditsRefunded,
    balanceAfter,
    data: { creditsRefunded, caller },
  });
});

ponder.on("CreditEscrow:JobDisputed", async ({ event, context }) => {
  const { jobId: jobKey, wallet, worker } = event.args;
  const opened = await changeJob(context.db, jobKey, { status: "disputed", disputeTx: event.transaction.hash });
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "JobDisputed",
    wallet,
    jobKey,
    data: {
      jobId: opened.id,
      jobKey,
      wallet,
      worker,
      modelId: opened.modelId,
      tier: opened.tier,
      disputeTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});

ponder.on("CreditEscrow:JobDisputeClosed", async ({ event, context }) => {
  const { jobId: jobKey, wallet, upheld, creditsRestored, balanceAfter } = event.args;
  // Upheld: the charge comes back (now, or from the owed queue when the reserve is topped up), which the API
  // shows as `refunded`; otherwise the settlement stands. `creditsRestored` is counted by RestitutionPaid.
  const opened = await changeJob(context.db, jobKey, { status: upheld ? "refunded" : "settled", balanceAfter });
  await changeAccount(context.db, wallet, () => ({ creditsAvailable: balanceAfter }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "JobDisputeClosed",
    wallet,
    jobKey,
    data: {
      jobId: opened.id,
      jobKey,
      wallet,
      upheld,
      creditsRestored,
      balanceAfter,
      modelId: opened.modelId,
      tier: opened.tier,
      blockNumber: event.block.number,
    },
  });
});

ponder.on("CreditEscrow:RestitutionPaid", async ({ event, context }) => {
  const { jobId: jobKey, wallet, credits, balanceAfter } = event.args;
  await changeAccount(context.db, wallet, (row) => ({
    creditsAvailable: balanceAfter,
    creditsRestored: row.creditsRestored + credits,
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "RestitutionPaid",
    wallet,
    jobKey,
    data: { jobId: jobIdFromKey(jobKey), jobKey, wallet, credits, balanceAfter },
  });
});

ponder.on("CreditEscrow:RestitutionOwed", async ({ event, context }) => {
  const { jobId: jobKey, wallet, credits, owedCredits } = event.args;
  // The reserve was short: the restitution waits in the escrow's owed queue (`npm run verify` reconciles it).
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "RestitutionOwed",
    wallet,
    jobKey,
    data: { jobId: jobIdFromKey(jobKey), jobKey, wallet, credits, owedCredits },
  });
});

ponder.on("CreditEscrow:ReserveFunded", async ({ event, context }) => {
  const { funder, amount, reserveAfter } = event.args;
  // No wallet: the reserve is protocol-wide. Kept in the log so operators can audit the dispute reserve.
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "ReserveFunded",
    data: { funder, amount, reserveAfter },
  });
});
