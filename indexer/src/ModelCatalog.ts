import { ponder } from "ponder:registry";
import { changeModel, insertModel } from "./write/model.js";
import { modelChange } from "ponder:schema";
import { tierLabel } from "./write/labels.js";

// The catalog. `workerCount` is maintained by the WorkerRegistry handlers. Every change is first scheduled
// (ModelChangeScheduled, with the time it may apply) and only later applied (ModelChangeApplied, followed in the
// same transaction by ModelAdded, ModelUpdated or ModelRetired); `model_change` keeps the announcements.

const CHANGE_KINDS = ["add", "update", "retire"] as const;

ponder.on("ModelCatalog:ModelChangeScheduled", async ({ event, context }) => {
  const a = event.args;
  const kind = CHANGE_KINDS[a.kind] ?? "update";
  const priced = kind !== "retire";
  await context.db
    .insert(modelChange)
    .values({
      changeId: a.changeId,
      modelKey: a.modelKey,
      modelId: a.modelId,
      kind,
      tier: priced ? tierLabel(a.params.tier) : null,
      creditsPerRequest: priced ? a.params.creditsPerRequest : null,
      creditsPer1kTokens: priced ? a.params.creditsPer1kTokens : null,
      contextWindow: priced ? a.params.contextWindow : null,
      scheduledAt: event.block.timestamp,
      readyAt: a.readyAt,
      status: "scheduled",
    })
    .onConflictDoNothing();
});

ponder.on("ModelCatalog:ModelChangeApplied", async ({ event, context }) => {
  if (!(await context.db.find(modelChange, { changeId: event.args.changeId }))) return;
  await context.db.update(modelChange, { changeId: event.args.changeId }).set({ status: "applied" });
});

ponder.on("ModelCatalog:ModelChangeCancelled", async ({ event, context }) => {
  if (!(await context.db.find(modelChange, { changeId: event.args.changeId }))) return;
  await context.db.update(modelChange, { changeId: event.args.changeId }).set({ status: "cancelled" });
});

ponder.on("ModelCatalog:ModelAdded", async ({ event, context }) => {
  const a = event.args;
  await insertModel(context.db, {
    modelKey: a.modelKey,
    modelId: a.modelId,
    index: a.index,
    tier: tierLabel(a.tier),
    creditsPerRequest: a.creditsPerRequest,
    creditsPer1kTokens: a.creditsPer1kTokens,
    contextWindow: a.contextWindow,
    parameters: a.parameters,
    ownedBy: a.ownedBy,
    createdAt: a.createdAt,
  });
});

ponder.on("ModelCatalog:ModelUpdated", async ({ event, context }) => {
  const a = event.args;
  await changeModel(context.db, a.modelKey, {
    tier: tierLabel(a.tier),
    creditsPerRequest: a.creditsPerRequest,
    creditsPer1kTokens: a.creditsPer1kTokens,
    contextWindow: a.contextWindow,
    parameters: a.parameters,
    ownedBy: a.ownedBy,
  });
});

ponder.on("ModelCatalog:ModelRetired", async ({ event, context }) => {
  await changeModel(context.db, event.args.modelKey, { retired: true, retiredAt: event.args.timestamp });
});
