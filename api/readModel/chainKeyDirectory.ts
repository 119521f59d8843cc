import type { Logger } from "pino";
import type { Hex } from "viem";
import { serviceUnavailable } from "../errors/dependencyOutage.js";
import type { KeyDirectory, KeyRecord } from "../http/middleware/authenticate.js";
import type { KeyStatusCache } from "../chain/keyStatusCache.js";
import type { IndexReader } from "./indexReader.js";

/**
 * Resolves API keys. The chain's ApiKeyRegistry is the word (cached per block), because the index may lag
 * behind a revocation or a fresh registration. When the chain does not answer within its short deadline, the
 * key's last status read from the chain answers, then the index; with neither, 503 `service_unavailable` — auth
 * never hangs on a stalled node and never answers 500.
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
      let row;
      try {
        row = await this.index.apiKey(keyHash);
      } catch {
        throw serviceUnavailable(
          "Neither the chain nor the index answered in time to check the API key. Retry shortly.",
        );
      }
      // The index may not have seen a key registered a moment ago: without the chain, "unknown" is not certain.
      if (!row) throw serviceUnavailable("The chain did not answer in time to check the API key. Retry shortly.");
      const status = row.status === "active" || row.status === "suspended" ? row.status : "revoked";
      return { wallet: row.wallet, status };
    }
  }
}
