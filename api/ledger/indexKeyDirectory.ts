import type { Hex } from "viem";
import type { KeyDirectory, KeyRecord } from "../http/middleware/authenticate.js";
import type { ActiveKeyCache } from "./activeKeyCache.js";
import type { CreditLedger } from "./creditLedger.js";
import type { IndexFreshness } from "./indexFreshness.js";

/**
 * Key status from the index (one indexed row per key hash), so authenticating a completion makes no RPC call. A
 * key the index does not know yet (registered a moment ago), or knows as revoked or suspended (reinstated a
 * moment ago), waits for the index to catch up with the chain, up to the freshness bound, before it is refused.
 * When the index is still behind at the bound, the chain answers instead (`chain`, the same directory as
 * `/v1/account`): a lagging index never refuses a key the chain holds active, and the extra chain read is paid
 * only while the index lags. A revocation the index has not seen yet is still refused by the escrow: the lock is
 * skipped (JobOpenSkipped), the job stops and nothing is charged (docs/DESIGN.md "Reservation ledger"). With a
 * `cache`, an active key is answered from memory until the index's key table changes (ActiveKeyCache).
 */
export class IndexKeyDirectory implements KeyDirectory {
  constructor(
    private readonly ledger: Pick<CreditLedger, "keyOf">,
    private readonly freshness: Pick<IndexFreshness, "caughtUpSince">,
    private readonly chain: KeyDirectory,
    private readonly cache?: ActiveKeyCache,
  ) {}

  async lookup(keyHash: Hex): Promise<KeyRecord | null> {
    const cached = this.cache?.get(keyHash);
    if (cached) return cached;
    const since = Date.now();
    const began = this.cache?.begin() ?? 0;
    const found = await this.ledger.keyOf(keyHash);
    // A served request never waits. A refusal (unknown, revoked, suspended) is given only once the index has caught
    // up with the chain as of this request, so a key registered or reinstated a moment ago is served.
    if (found?.status === "active") {
      this.cache?.keep(keyHash, found, began);
      return found;
    }
    if (!(await this.freshness.caughtUpSince(since))) return this.chain.lookup(keyHash);
    return this.ledger.keyOf(keyHash);
  }
}
