import type { Address, Hex } from "viem";
import { withDeadline } from "../runtime/withDeadline.js";
import type { KeyStatus as ChainKeyStatus } from "@credit-metered/client";
import type { EscrowChain } from "./escrowChain.js";

export interface KeyStatusOptions {
  /** Auth waits at most this long for the chain (block number + key status together). */
  timeoutMs: number;
  /** After the chain missed that deadline, it is skipped for this long (one probe per period goes through). */
  retryMs: number;
  /** Keys whose last known status is kept for when the chain does not answer. */
  maxRemembered?: number;
}

export interface KeyStatusAnswer {
  wallet: Address;
  status: ChainKeyStatus;
  /** Milliseconds since this status was read from the chain: 0 when read now, more when the chain did not answer. */
  ageMs: number;
}

/** The chain did not answer in time and no status of this key is known. */
export class KeyStatusUnavailableError extends Error {
  override name = "KeyStatusUnavailableError";
}

/**
 * Key status as the chain says it, cached per block: a revocation mined in block N is seen by every request
 * that reads block N or later, so it bites on the very next request (spec, Authentication rule 7) while a burst
 * of requests in the same block costs one eth_call.
 *
 * Auth never waits on a stalled chain: the chain gets `timeoutMs`; when it misses, the key's last status read from
 * the chain answers (its age is reported), and further requests skip the chain until a probe answers again. The
 * escrow contract itself refuses a revoked or suspended key at `openJob`, so a stale answer cannot spend credits.
 */
export class KeyStatusCache {
  private block = -1n;
  private entries = new Map<Hex, { wallet: Address; status: ChainKeyStatus }>();
  private readonly lastKnown = new Map<Hex, { wallet: Address; status: ChainKeyStatus; at: number }>();
  private chainMissedAt: number | undefined;
  private lastProbeAt = 0;

  constructor(
    private readonly chain: EscrowChain,
    private readonly options: KeyStatusOptions = { timeoutMs: 500, retryMs: 1_000 },
  ) {}

  async statusOf(keyHash: Hex): Promise<KeyStatusAnswer> {
    const now = Date.now();
    if (this.chainMissedAt === undefined || now - this.lastProbeAt >= this.options.retryMs) {
      this.lastProbeAt = now;
      try {
        const fresh = await withDeadline(this.fromChain(keyHash), this.options.timeoutMs, "key status from the chain");
        this.chainMissedAt = undefined;
        this.remember(keyHash, fresh);
        return { ...fresh, ageMs: 0 };
      } catch (error) {
        this.chainMissedAt ??= now;
        const known = this.lastKnown.get(keyHash);
        if (!known) throw new KeyStatusUnavailableError((error as Error).message, { cause: error });
      }
    }
    const known = this.lastKnown.get(keyHash);
    if (!known) throw new KeyStatusUnavailableError("the chain is not answering and this key's status is unknown");
    return { wallet: known.wallet, status: known.status, ageMs: Date.now() - known.at };
  }

  private async fromChain(keyHash: Hex): Promise<{ wallet: Address; status: ChainKeyStatus }> {
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

  private remember(keyHash: Hex, value: { wallet: Address; status: ChainKeyStatus }): void {
    this.lastKnown.delete(keyHash);
    this.lastKnown.set(keyHash, { ...value, at: Date.now() });
    // Oldest first in a Map: drop the least recently read keys beyond the bound.
    const max = this.options.maxRemembered ?? 100_000;
    while (this.lastKnown.size > max) {
      const oldest = this.lastKnown.keys().next().value;
      if (oldest === undefined) break;
      this.lastKnown.delete(oldest);
    }
  }
}
