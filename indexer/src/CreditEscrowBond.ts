import { ponder } from "ponder:registry";
import { projectBondMovement } from "./write/bond.js";

// Workers' stablecoin bonds in the escrow (issue 22): posted by the worker or a sponsor, withdrawn down to the
// charges at risk, seized whole into the reserve by an upheld dispute (with the disputed job's deferred pay).
// Kept apart from CreditEscrow.ts (credits and jobs) although the events are the escrow's: a different concern.

ponder.on("CreditEscrow:BondPosted", async ({ event, context }) => {
  const { worker, payer, amount, bondAfter } = event.args;
  await projectBondMovement(context.db, context.chain.id, event, { worker, kind: "posted", amount, bondAfter, payer });
});

ponder.on("CreditEscrow:BondWithdrawn", async ({ event, context }) => {
  const { worker, amount, bondAfter } = event.args;
  await projectBondMovement(context.db, context.chain.id, event, { worker, kind: "withdrawn", amount, bondAfter });
});

ponder.on("CreditEscrow:BondSlashed", async ({ event, context }) => {
  const { worker, jobId: jobKey, amount, reserveAfter } = event.args;
  // The whole bond goes: nothing is left after a seizure.
  await projectBondMovement(context.db, context.chain.id, event, {
    worker,
    kind: "seized",
    amount,
    bondAfter: 0n,
    jobKey,
    reserveAfter,
  });
});

ponder.on("CreditEscrow:PayoutForfeited", async ({ event, context }) => {
  const { worker, jobId: jobKey, amount, reserveAfter } = event.args;
  // Deferred pay (claimable after a refused transfer), not bond: the bond row only counts it.
  await projectBondMovement(context.db, context.chain.id, event, {
    worker,
    kind: "payout_forfeited",
    amount,
    jobKey,
    reserveAfter,
  });
});
