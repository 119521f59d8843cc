import { ponder } from "ponder:registry";
import { changeModel, insertModel } from "./write/model.js";
import { tierLabel } from "./write/labels.js";

// The catalog. `workerCount` is maintained by the WorkerRegistry handlers.

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
