import type { Address, Hex } from "viem";
import type { ChainKeyStatus, EscrowChain } from "./escrowChain.js";

/**
 * Key status as the chain says it, cached per block: a revocation mined in block N is seen by every request
 * that reads block N or later, so it bites on the very next request (spec, Authentication rule 7) while a burst
 * of requests in the same block costs one eth_call.
 */
export class KeyStatusCache {
  private block = -1n;
  private entries = new Map<Hex, { wallet: Address; status: ChainKeyStatus }>();

  constructor(private readonly chain: EscrowChain) {}

  async statusOf(keyHash: Hex): Promise<{ wallet: Address; status: ChainKeyStatus }> {
    const block = await this.chain.blockNumber();
    if (block !== this.block) {
      this.block = block;
      this.entries = new Map();
    }
    const cached = this.entries.get(keyHash);
    if (cached) return cached;
    const fresh = await this.chain.keyStatus(keyHash, block);
    if (this.block === block) this.entries.set(keyHash, fresh);
    return fresh;
  }
}
