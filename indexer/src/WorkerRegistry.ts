import { formatUnits } from "viem";
import { ponder } from "ponder:registry";
import { recordChainEvent } from "./write/chainEvent.js";
import { jobIdFromKey } from "./write/ids.js";
import { bytes32Label } from "./write/labels.js";
import { changeWorker, exitWorker, registerWorker, replaceWorkerModels } from "./write/worker.js";

// Workers, their stake and hosted models (worker_model and model.workerCount follow the model list).

/** The stake token has 18 decimals; webhooks show whole SVC as a number. */
const STAKE_DECIMALS = 18;

ponder.on("WorkerRegistry:WorkerRegistered", async ({ event, context }) => {
  const { worker, endpoint, stake, modelKeys } = event.args;
  await registerWorker(
    context.db,
    { address: worker, endpoint, stake, registeredAt: event.block.timestamp },
    modelKeys,
  );
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "WorkerRegistered",
    data: { worker, endpoint, stake, stakeSvc: Number(formatUnits(stake, STAKE_DECIMALS)), modelKeys },
  });
});

ponder.on("WorkerRegistry:WorkerModelsUpdated", async ({ event, context }) => {
  await replaceWorkerModels(context.db, event.args.worker, event.args.modelKeys);
});

ponder.on("WorkerRegistry:WorkerEndpointUpdated", async ({ event, context }) => {
  await changeWorker(context.db, event.args.worker, { endpoint: event.args.endpoint });
});

ponder.on("WorkerRegistry:WorkerStakeIncreased", async ({ event, context }) => {
  await changeWorker(context.db, event.args.worker, { stake: event.args.stakeAfter });
});

ponder.on("WorkerRegistry:WorkerUnbondingStarted", async ({ event, context }) => {
  await changeWorker(context.db, event.args.worker, { status: "unbonding", unlockAt: event.args.unlockAt });
});

ponder.on("WorkerRegistry:WorkerWithdrawn", async ({ event, context }) => {
  await exitWorker(context.db, event.args.worker, { stake: 0n });
});

ponder.on("WorkerRegistry:WorkerSlashed", async ({ event, context }) => {
  const { worker, jobId: jobKey, amount, stakeAfter, reason } = event.args;
  await changeWorker(context.db, worker, (row) => ({
    slashCount: row.slashCount + 1,
    totalSlashed: row.totalSlashed + amount,
  }));
  // An upheld dispute takes the whole stake and removes the worker from the pool for good.
  await exitWorker(context.db, worker, { stake: stakeAfter });
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "WorkerSlashed",
    jobKey,
    data: {
      worker,
      jobKey,
      relatedJobId: jobIdFromKey(jobKey),
      amount,
      slashAmountSvc: Number(formatUnits(amount, STAKE_DECIMALS)),
      stakeAfter,
      reason: bytes32Label(reason),
      slashTx: event.transaction.hash,
      blockNumber: event.block.number,
    },
  });
});
