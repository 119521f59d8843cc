import type { Logger } from "pino";
import type { Hex } from "viem";
import type { KeyDirectory, KeyRecord } from "../http/middleware/authenticate.js";
import type { KeyStatusCache } from "../chain/keyStatusCache.js";
import type { IndexReader } from "./indexReader.js";

/**
 * Resolves API keys. The chain's ApiKeyRegistry is the word (cached per block), because the index may lag
 * behind a revocation or a fresh registration; the index answers only when the RPC endpoint is unavailable.
 */
export class ChainKeyDirectory implements KeyDirectory {
  constructor(
    private readonly keys: KeyStatusCache,
    private readonly index: IndexReader,
    private readonly logger: Logger,
  ) {}

  async lookup(keyHash: Hex): Promise<KeyRecord | null> {
    try {
      const { wallet, status } = await this.keys.statusOf(keyHash);
      if (status === "none") return null;
      return { wallet, status };
    } catch (error) {
      this.logger.warn({ err: error }, "key status from the chain unavailable; using the index");
      const row = await this.index.apiKey(keyHash);
      if (!row) return null;
      const status = row.status === "active" || row.status === "suspended" ? row.status : "revoked";
      return { wallet: row.wallet, status };
    }
  }
}
