import type { Hex } from "viem";
import { isTierName, type TierName } from "@credit-metered/client";
import { MAX_MODEL_ID_BYTES, MODEL_ID_PATTERN, MODEL_ID_TEXT, isModelFilter } from "@credit-metered/client/http";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import { IndexUnavailableError } from "./indexClient.js";
import type { IndexReader, IndexedModel } from "./indexReader.js";

export interface ModelInfo {
  id: string;
  modelKey: Hex;
  tier: TierName;
  creditsPerRequest: number;
  creditsPer1kTokens: number;
  contextWindow: number;
  parameters: string;
  ownedBy: string;
  /** Unix seconds the model was listed. */
  created: number;
}

export { MAX_MODEL_ID_BYTES, MODEL_ID_PATTERN, isModelFilter };

/**
 * Whether `value` could be a catalog model id at all: 1–64 UTF-8 bytes, no control characters and no lone
 * surrogates. Anything else matches no model, and is never sent to a database (Postgres text cannot hold NUL).
 */
export function isPossibleModelId(value: string): boolean {
  return Buffer.byteLength(value, "utf8") <= MAX_MODEL_ID_BYTES && MODEL_ID_TEXT.test(value);
}

/**
 * The catalog as indexed, cached briefly: every completion needs its model and the index is one HTTP hop away.
 * A listing or retirement shows within `ttlMs`. While the index does not answer, the last catalog read keeps
 * serving for up to `staleMaxMs` (completions go on; prices are checked again by the escrow at `openJob`); beyond
 * that, or with no catalog read yet, callers get 503 `service_unavailable`.
 */
export class ModelDirectory {
  private cache: { at: number; models: Map<string, ModelInfo> } | undefined;
  private loading: Promise<Map<string, ModelInfo>> | undefined;

  constructor(
    private readonly index: IndexReader,
    private readonly ttlMs = 1_000,
    private readonly staleMaxMs = 600_000,
  ) {}

  async all(): Promise<ModelInfo[]> {
    return [...(await this.load()).values()];
  }

  /** Milliseconds since the catalog served now was read from the index (0 before any read). */
  ageMs(): number {
    return this.cache ? Date.now() - this.cache.at : 0;
  }

  /** The model whose id is exactly `modelId` (no trimming, no case folding, no control characters). */
  async get(modelId: string): Promise<ModelInfo | undefined> {
    if (!isPossibleModelId(modelId)) return undefined;
    const models = await this.load();
    const found = models.get(modelId);
    if (found) return found;
    // A model listed a moment ago: ask the index directly before saying it does not exist. The database may
    // compare text differently from JavaScript, so the answer must still match byte for byte.
    try {
      const row = await this.index.modelById(modelId);
      return row && row.modelId === modelId ? toModelInfo(row) : undefined;
    } catch (error) {
      // The index is away: the catalog we have is the best answer (an unknown id stays unknown).
      if (error instanceof IndexUnavailableError) return undefined;
      throw error;
    }
  }

  private async load(): Promise<Map<string, ModelInfo>> {
    if (this.cache && Date.now() - this.cache.at < this.ttlMs) return this.cache.models;
    this.loading ??= this.index
      .listedModels()
      .then((rows) => {
        const models = new Map(rows.map((row) => [row.modelId, toModelInfo(row)]));
        this.cache = { at: Date.now(), models };
        return models;
      })
      .finally(() => {
        this.loading = undefined;
      });
    try {
      return await this.loading;
    } catch (error) {
      if (!(error instanceof IndexUnavailableError)) throw error;
      if (this.cache && Date.now() - this.cache.at <= this.staleMaxMs) return this.cache.models;
      throw serviceUnavailable("The model catalog cannot be read from the index right now. Retry shortly.");
    }
  }
}

function toModelInfo(row: IndexedModel): ModelInfo {
  return {
    id: row.modelId,
    modelKey: row.modelKey,
    tier: isTierName(row.tier) ? row.tier : "standard",
    creditsPerRequest: row.creditsPerRequest,
    creditsPer1kTokens: row.creditsPer1kTokens,
    contextWindow: row.contextWindow,
    parameters: row.parameters,
    ownedBy: row.ownedBy,
    created: Number(row.createdAt),
  };
}
