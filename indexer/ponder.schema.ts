import { index, onchainTable, primaryKey, relations } from "ponder";

// Read models of the chain. Written only by the handlers in src/; read by the API through @ponder/client.
// Amounts are bigint (credits, or token base units where the name says so); times are unix seconds (bigint).

/** One row per wallet that ever deposited, registered a key or opened a job. */
export const account = onchainTable("account", (t) => ({
  wallet: t.hex().primaryKey(),
  creditsAvailable: t.bigint().notNull(),
  creditsLocked: t.bigint().notNull(),
  creditsDeposited: t.bigint().notNull(),
  creditsWithdrawn: t.bigint().notNull(),
  creditsCharged: t.bigint().notNull(),
  creditsRestored: t.bigint().notNull(),
  lastTopUpAt: t.bigint(),
  keyHash: t.hex(),
  /** none | active | revoked | suspended */
  keyStatus: t.text().notNull(),
  keyCreatedAt: t.bigint(),
  suspended: t.boolean().notNull(),
}));

/** Every key hash ever registered; lookup by hash is the primary key. */
export const apiKey = onchainTable(
  "api_key",
  (t) => ({
    keyHash: t.hex().primaryKey(),
    wallet: t.hex().notNull(),
    /** active | revoked | suspended */
    status: t.text().notNull(),
    createdAt: t.bigint().notNull(),
    revokedAt: t.bigint(),
  }),
  (table) => ({ walletIdx: index().on(table.wallet) }),
);

/** The model catalog. */
export const model = onchainTable(
  "model",
  (t) => ({
    modelKey: t.hex().primaryKey(),
    modelId: t.text().notNull(),
    index: t.integer().notNull(),
    /** lite | standard | pro | max */
    tier: t.text().notNull(),
    creditsPerRequest: t.integer().notNull(),
    creditsPer1kTokens: t.integer().notNull(),
    contextWindow: t.integer().notNull(),
    parameters: t.text().notNull(),
    ownedBy: t.text().notNull(),
    createdAt: t.bigint().notNull(),
    retired: t.boolean().notNull(),
    retiredAt: t.bigint(),
    /** Registered (not exited) workers hosting the model. */
    workerCount: t.integer().notNull(),
  }),
  (table) => ({ modelIdIdx: index().on(table.modelId) }),
);

/**
 * Catalog changes governance scheduled (ModelCatalog: nothing applies before `readyAt`, 2 days after scheduling),
 * so wallets and the web app see a repricing, a new model or a retirement coming.
 */
export const modelChange = onchainTable(
  "model_change",
  (t) => ({
    changeId: t.bigint().primaryKey(),
    modelKey: t.hex().notNull(),
    modelId: t.text().notNull(),
    /** add | update | retire */
    kind: t.text().notNull(),
    /** The new tier and prices (a retirement carries none). */
    tier: t.text(),
    creditsPerRequest: t.integer(),
    creditsPer1kTokens: t.integer(),
    contextWindow: t.integer(),
    scheduledAt: t.bigint().notNull(),
    readyAt: t.bigint().notNull(),
    /** scheduled | applied | cancelled */
    status: t.text().notNull(),
  }),
  (table) => ({ modelChangeKeyIdx: index().on(table.modelKey) }),
);

/** Registered workers. */
export const worker = onchainTable("worker", (t) => ({
  address: t.hex().primaryKey(),
  endpoint: t.text().notNull(),
  /** Stake-token base units (18 decimals). */
  stake: t.bigint().notNull(),
  modelKeys: t.hex().array().notNull(),
  /** active | unbonding | exited */
  status: t.text().notNull(),
  unlockAt: t.bigint(),
  registeredAt: t.bigint().notNull(),
  slashCount: t.integer().notNull(),
  totalSlashed: t.bigint().notNull(),
}));

/**
 * Each worker's stablecoin bond in the escrow (issue 22: what a worker may be paid inside open dispute and
 * arbitration windows is bounded by it). A bond can be posted before the worker registers, so the row is keyed by
 * the worker's address alone. `bond` is copied from each event's `bondAfter` (zero after a seizure); the totals
 * count every movement. The charges at risk (`bondOf(worker).atRisk`) depend on the clock, so read them on chain.
 */
export const workerBond = onchainTable("worker_bond", (t) => ({
  worker: t.hex().primaryKey(),
  /** Stablecoin base units (6 decimals) held now. */
  bond: t.bigint().notNull(),
  totalPosted: t.bigint().notNull(),
  totalWithdrawn: t.bigint().notNull(),
  /** Seized into the reserve by upheld disputes (`BondSlashed`). */
  totalSeized: t.bigint().notNull(),
  /** Deferred pay moved into the reserve by upheld disputes (`PayoutForfeited`); not part of `bond`. */
  totalPayoutForfeited: t.bigint().notNull(),
  seizureCount: t.integer().notNull(),
  updatedAt: t.bigint().notNull(),
}));

/** Every movement of a worker's bond, in chain order (`id` and `cursor` as in `chain_event`). */
export const workerBondChange = onchainTable(
  "worker_bond_change",
  (t) => ({
    id: t.text().primaryKey(),
    cursor: t.text().notNull(),
    worker: t.hex().notNull(),
    /** posted | withdrawn | seized | payout_forfeited */
    kind: t.text().notNull(),
    /** Stablecoin base units moved. */
    amount: t.bigint().notNull(),
    /** The bond afterwards (`payout_forfeited` leaves it as it was). */
    bondAfter: t.bigint().notNull(),
    /** Who paid a posting (the worker or a sponsor); null otherwise. */
    payer: t.hex(),
    /** The job of the upheld dispute behind a seizure or forfeiture; null otherwise. */
    jobKey: t.hex(),
    /** The reserve after a seizure or forfeiture; null otherwise. */
    reserveAfter: t.bigint(),
    txHash: t.hex().notNull(),
    blockNumber: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
  }),
  (table) => ({ workerIdx: index().on(table.worker, table.cursor) }),
);

// GraphQL serves a worker with its bond and the bond's history (`worker { bond { … } bondChanges { items } }`).
export const workerRelations = relations(worker, ({ one, many }) => ({
  bond: one(workerBond, { fields: [worker.address], references: [workerBond.worker] }),
  bondChanges: many(workerBondChange),
}));

export const workerBondChangeRelations = relations(workerBondChange, ({ one }) => ({
  workerRow: one(worker, { fields: [workerBondChange.worker], references: [worker.address] }),
}));

/** Which worker hosts which model (kept in step with worker.modelKeys, for counting and routing). */
export const workerModel = onchainTable(
  "worker_model",
  (t) => ({
    worker: t.hex().notNull(),
    modelKey: t.hex().notNull(),
  }),
  (table) => ({ pk: primaryKey({ columns: [table.worker, table.modelKey] }), modelIdx: index().on(table.modelKey) }),
);

/** Jobs as the chain knows them. `processing`/`settling` are gateway-side and never appear here. */
export const job = onchainTable(
  "job",
  (t) => ({
    /** bytes32 job id as on chain. */
    jobKey: t.hex().primaryKey(),
    /** The API's `job_<ULID>`. */
    id: t.text().notNull(),
    wallet: t.hex().notNull(),
    keyHash: t.hex().notNull(),
    modelKey: t.hex().notNull(),
    modelId: t.text().notNull(),
    tier: t.text().notNull(),
    /** pending | settled | failed | refunded | disputed (| refunded after an upheld dispute) */
    status: t.text().notNull(),
    creditsLocked: t.bigint().notNull(),
    creditsCharged: t.bigint(),
    creditsRefunded: t.bigint(),
    /** Stablecoin base units paid to the worker and to the treasury. */
    workerAmount: t.bigint(),
    feeAmount: t.bigint(),
    worker: t.hex(),
    promptTokens: t.integer(),
    completionTokens: t.integer(),
    outputHash: t.hex(),
    finalTokenAt: t.bigint(),
    deadline: t.bigint().notNull(),
    createdAt: t.bigint().notNull(),
    completedAt: t.bigint(),
    balanceAfter: t.bigint(),
    escrowTx: t.hex().notNull(),
    escrowBlock: t.bigint().notNull(),
    settlementTx: t.hex(),
    settlementBlock: t.bigint(),
    refundTx: t.hex(),
    failTx: t.hex(),
    disputeTx: t.hex(),
  }),
  (table) => ({
    idIdx: index().on(table.id),
    keyIdx: index().on(table.keyHash, table.id),
    walletIdx: index().on(table.wallet, table.id),
  }),
);

/** Disputes and their outcome. */
export const dispute = onchainTable("dispute", (t) => ({
  jobKey: t.hex().primaryKey(),
  jobId: t.text().notNull(),
  wallet: t.hex().notNull(),
  worker: t.hex().notNull(),
  clientHash: t.hex().notNull(),
  proofHash: t.hex().notNull(),
  openedTx: t.hex().notNull(),
  openedAt: t.bigint().notNull(),
  deadline: t.bigint().notNull(),
  /** pending | upheld | rejected | expired */
  outcome: t.text().notNull(),
  creditsRestored: t.bigint(),
  slashAmount: t.bigint(),
  resolutionTx: t.hex(),
  resolvedAt: t.bigint(),
}));

/**
 * Append-only log of the contract events a webhook can be derived from, in chain order.
 * `id` = `<chainId>:<blockNumber>:<logIndex>` is stable across restarts and replays;
 * `cursor` = zero-padded `<blockNumber 12 digits><logIndex 6 digits>` sorts in chain order, so a consumer
 * tails the log with `WHERE cursor > $last ORDER BY cursor`.
 *
 * The key is `cursor`, not `id`: both name the same log (one chain per schema), and the one reader (the webhook
 * feed) tails by cursor, so one index serves it. Each index here is written twice a job (JobOpened, JobSettled);
 * the `id` key and a `(wallet, cursor)` index that nothing read were two more per row.
 */
export const chainEvent = onchainTable("chain_event", (t) => ({
  id: t.text().notNull(),
  cursor: t.text().primaryKey(),
  chainId: t.integer().notNull(),
  blockNumber: t.bigint().notNull(),
  logIndex: t.integer().notNull(),
  txHash: t.hex().notNull(),
  timestamp: t.bigint().notNull(),
  /** Contract event name, e.g. `JobOpened`, `JobSettled`, `Deposited`, `WorkerSlashed`. */
  name: t.text().notNull(),
  /** The wallet the event concerns; null for worker-wide events. */
  wallet: t.hex(),
  jobKey: t.hex(),
  /** Decoded event args (bigints as decimal strings) plus derived facts the webhook needs
   *  (e.g. `balanceAfter`, `modelId`, `tier`). */
  data: t.json().notNull(),
}));
